package cniconf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/containernetworking/cni/libcni"
)

// fixture is a primary's config as its agent writes it on a node.
type fixture struct {
	name string // testdata/<name>/<file>
	file string
	perm os.FileMode // the mode the agent gives it
}

var listFixtures = []fixture{
	{"calico", "10-calico.conflist", 0o600},
	{"cilium", "05-cilium.conflist", 0o600},
	{"flannel", "10-flannel.conflist", 0o644},
	{"containerd", "10-containerd-net.conflist", 0o644},
	{"kindnet", "10-kindnet.conflist", 0o644},
	{"aws-vpc-cni", "10-aws.conflist", 0o644},
	{"multus-thin", "00-multus.conflist", 0o600},
}

var multusThick = fixture{"multus-thick", "00-multus.conf", 0o600}

func (f fixture) bytes(t *testing.T) []byte {
	t.Helper()
	data, err := readFixture(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// confDir makes an empty conf dir named with the test prefix "ri".
func confDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ri-cniconf-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// place writes the fixture into dir as its agent would and returns its path.
func (f fixture) place(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, f.file)
	if err := os.WriteFile(path, f.bytes(t), f.perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, f.perm); err != nil {
		t.Fatal(err)
	}
	return path
}

func chainedConfig(t *testing.T, dir string) Config {
	t.Helper()
	cfg := Config{Mode: ModeChained, ConfDir: dir}
	if err := cfg.Finish(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// anyVersionInstaller is rail's installer as if rail accepted every
// cniVersion, so that the edits are tested on the 0.3.1 primaries (Cilium,
// flannel, kindnet, Multus thick) too; TestInstallChecksCNIVersion tests
// the real check.
func anyVersionInstaller(t *testing.T, dir string) *Installer {
	t.Helper()
	in := NewInstaller(chainedConfig(t, dir))
	in.supports = anyVersion
	return in
}

// installed is a conf dir with f placed and rail's entry inserted.
func installed(t *testing.T, f fixture) (dir, path string, in *Installer) {
	t.Helper()
	dir = confDir(t)
	path = f.place(t, dir)
	in = anyVersionInstaller(t, dir)
	if _, err := in.Install(nil); err != nil {
		t.Fatal(err)
	}
	return dir, path, in
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// dirNames lists a directory, so that left-over temp files show.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// checkKept verifies that every top-level value but "plugins", and every
// plugin of the original, has the same bytes in edited, and that edited
// loads with libcni and ends with exactly one rail entry.
func checkKept(t *testing.T, original, edited []byte) {
	t.Helper()
	before, err := parseDocument(original)
	if err != nil {
		t.Fatal(err)
	}
	after, err := parseDocument(edited)
	if err != nil {
		t.Fatalf("edited file does not parse: %v\n%s", err, edited)
	}
	if len(after.members) != len(before.members) {
		t.Fatalf("top-level keys: %d, want %d", len(after.members), len(before.members))
	}
	for i, m := range before.members {
		if after.members[i].key != m.key {
			t.Errorf("key %d is %q, want %q", i, after.members[i].key, m.key)
		}
		if m.key != "plugins" && !bytes.Equal(after.value(m.key), before.value(m.key)) {
			t.Errorf("value of %q changed:\n%s\nwant\n%s", m.key, after.value(m.key), before.value(m.key))
		}
	}
	if len(after.plugins) != len(before.plugins)+1 {
		t.Fatalf("%d plugins, want %d", len(after.plugins), len(before.plugins)+1)
	}
	for i, p := range before.plugins {
		q := after.plugins[i]
		if !bytes.Equal(edited[q.start:q.end], original[p.start:p.end]) {
			t.Errorf("plugins[%d] changed", i)
		}
	}
	list, err := libcni.ConfListFromBytes(edited)
	if err != nil {
		t.Fatalf("libcni: %v", err)
	}
	last := list.Plugins[len(list.Plugins)-1].Network
	if last.Type != "rail" || !last.Capabilities["io.kubernetes.cri.pod-annotations"] {
		t.Fatalf("last plugin %+v: want rail with the pod-annotations capability", last)
	}
}
