package cniconf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// A runtime reading the conflist while rail inserts and removes its entry
// sees the primary's bytes or the edited bytes, never a part of either.
func TestReadersNeverSeeAPartialFile(t *testing.T) {
	f := listFixtures[3]
	dir, path, in := installed(t, f)
	edited, original := readFile(t, path), f.bytes(t)
	if _, err := in.Uninstall(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bad []byte
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, edited) && !bytes.Equal(got, original) {
				bad = got
				return
			}
		}
	}()
	for range 30 {
		if _, err := in.Install(nil); err != nil {
			t.Fatal(err)
		}
		if _, err := in.Uninstall(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if bad != nil {
		t.Fatalf("a reader saw %q", bad)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{uninstallMarker, f.file}) {
		t.Fatalf("left behind: %v", names)
	}
}

// A file changed between reading and replacing is not overwritten.
func TestReplaceIfUnchanged(t *testing.T) {
	dir := confDir(t)
	path := filepath.Join(dir, "10-x.conflist")
	if err := os.WriteFile(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := replaceIfUnchanged(path, []byte("old"), []byte("edited"), 0o644)
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("replaceIfUnchanged = %v, want ErrChanged", err)
	}
	if got := readFile(t, path); string(got) != "new" {
		t.Fatalf("file now %q", got)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"10-x.conflist"}) {
		t.Fatalf("temp file left behind: %v", names)
	}
	if err := replaceIfUnchanged(path, []byte("new"), []byte("edited"), 0o640); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); string(got) != "edited" || fileMode(path, 0) != 0o640 {
		t.Fatalf("file now %q mode %v", got, fileMode(path, 0))
	}
}
