package cniconf

import (
	"os"
	"path/filepath"
	"testing"
)

func readFixture(f fixture) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", f.name, f.file))
}

func writeTestFile(dir, name string, data []byte) error {
	return os.WriteFile(filepath.Join(dir, name), data, 0o644)
}

// The watcher's pass when nothing is to do (every event, its own writes too).
func BenchmarkPassEntryInPlace(b *testing.B) {
	dir := b.TempDir()
	f := listFixtures[5]
	data, err := readFixture(f)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Mode: ModeChained, ConfDir: dir}
	if err := cfg.Finish(); err != nil {
		b.Fatal(err)
	}
	if err := writeTestFile(dir, f.file, data); err != nil {
		b.Fatal(err)
	}
	in := NewInstaller(cfg)
	if _, err := in.Install(nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if res, err := in.Install(nil); err != nil || res.Changed {
			b.Fatal(res, err)
		}
	}
}

// Splicing the entry in and out of a list, in memory.
func BenchmarkSpliceInAndOut(b *testing.B) {
	data, err := readFixture(listFixtures[5])
	if err != nil {
		b.Fatal(err)
	}
	in := &Installer{entry: []byte(DefaultEntry), typ: "rail"}
	for range b.N {
		doc, err := parseDocument(data)
		if err != nil {
			b.Fatal(err)
		}
		edited, err := appendPlugin(doc, in.entry)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := in.withoutEntry(edited); err != nil {
			b.Fatal(err)
		}
	}
}
