package cniconf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Every primary: inserted once, other bytes kept, mode kept, a backup of
// the primary's bytes; a second install changes nothing; uninstall gives
// back the primary's bytes exactly and leaves no file of rail's.
func TestInstallUninstallFixtures(t *testing.T) {
	for _, f := range listFixtures {
		t.Run(f.name, func(t *testing.T) {
			dir := confDir(t)
			path := f.place(t, dir)
			original := f.bytes(t)
			in := anyVersionInstaller(t, dir)

			res, err := in.Install(nil)
			if err != nil || !res.Changed || res.File != path || res.Entry != EntryMissing {
				t.Fatalf("Install = %+v, %v; want a change of %s", res, err, path)
			}
			edited := readFile(t, path)
			checkKept(t, original, edited)
			if got := fileMode(path, 0); got != f.perm {
				t.Errorf("mode %v, want %v", got, f.perm)
			}
			if backup := readFile(t, path+backupSuffix); !bytes.Equal(backup, original) {
				t.Errorf("backup differs from the primary's bytes")
			}

			res, err = in.Install(nil)
			if err != nil || res.Changed || res.Entry != EntryCurrent {
				t.Fatalf("second Install = %+v, %v; want no change", res, err)
			}
			if again := readFile(t, path); !bytes.Equal(again, edited) {
				t.Fatalf("second Install changed the bytes")
			}

			changed, err := in.Uninstall()
			if err != nil || !slices.Equal(changed, []string{path}) {
				t.Fatalf("Uninstall = %v, %v", changed, err)
			}
			if back := readFile(t, path); !bytes.Equal(back, original) {
				t.Fatalf("after uninstall:\n%q\nwant the primary's bytes\n%q", back, original)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{uninstallMarker, f.file}) {
				t.Fatalf("conf dir holds %v, want only %s and the uninstall marker", names, f.file)
			}
		})
	}
}

// The primary rewrites its file (in place like Calico, by rename like
// flannel, or with other bytes): the next install puts the entry back once.
func TestInstallAfterPrimaryRewrites(t *testing.T) {
	rewrites := []struct {
		name    string
		rewrite func(t *testing.T, path string, data []byte)
	}{
		{"in place (calico, multus thick)", func(t *testing.T, path string, data []byte) {
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"rename over (flannel, cilium, kindnet, aws)", func(t *testing.T, path string, data []byte) {
			if err := WriteFile(path, bytes.NewReader(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, f := range listFixtures {
		for _, rw := range rewrites {
			t.Run(f.name+"/"+rw.name, func(t *testing.T) {
				_, path, in := installed(t, f)
				edited := readFile(t, path)
				rw.rewrite(t, path, f.bytes(t))
				res, err := in.Install(nil)
				if err != nil || !res.Changed || res.Entry != EntryMissing {
					t.Fatalf("Install after rewrite = %+v, %v", res, err)
				}
				if got := readFile(t, path); !bytes.Equal(got, edited) {
					t.Fatalf("after rewrite and install:\n%s\nwant\n%s", got, edited)
				}
			})
		}
	}
}

// A single-plugin .conf (Multus thick) gets a list made from it,
// NAME-rail.conflist, which the runtime reads first; the .conf stays its
// writer's, byte for byte. Uninstall removes the list.
func TestInstallTurnsConfIntoList(t *testing.T) {
	dir := confDir(t)
	conf := multusThick.place(t, dir)
	original := multusThick.bytes(t)
	in := anyVersionInstaller(t, dir)
	res, err := in.Install(nil)
	list := filepath.Join(dir, "00-multus-rail.conflist")
	if err != nil || !res.Changed || res.Target != conf || res.File != list {
		t.Fatalf("Install = %+v, %v", res, err)
	}
	if first, err := runtimeFile(dir); err != nil || first != list {
		t.Fatalf("the runtime reads %s (%v), want %s", first, err, list)
	}
	if got := readFile(t, conf); !bytes.Equal(got, original) {
		t.Fatalf("the .conf changed: %q", got)
	}
	data := readFile(t, list)
	doc, err := parseDocument(data)
	if err != nil || len(doc.plugins) != 2 {
		t.Fatalf("list %s: %v", data, err)
	}
	if first := data[doc.plugins[0].start:doc.plugins[0].end]; !bytes.Equal(first, bytes.TrimSpace(original)) {
		t.Errorf("plugins[0] = %s, want the .conf's bytes", first)
	}
	if !bytes.Equal(doc.value("name"), []byte(`"multus-cni-network"`)) || !bytes.Equal(doc.value("cniVersion"), []byte(`"0.3.1"`)) {
		t.Errorf("name/cniVersion not taken from the .conf: %s", data)
	}
	if got := fileMode(list, 0); got != multusThick.perm {
		t.Errorf("list mode %v, want the .conf's %v", got, multusThick.perm)
	}
	if res, err := in.Install(nil); err != nil || res.Changed || res.Target != conf {
		t.Fatalf("second Install = %+v, %v; want no change", res, err)
	}

	// Multus thick writes its .conf again, the same: nothing to do.
	multusThick.place(t, dir)
	if res, err := in.Install(nil); err != nil || res.Changed {
		t.Fatalf("Install after the same .conf again = %+v, %v", res, err)
	}
	// With other bytes: the list follows.
	changed := bytes.Replace(original, []byte(`"logLevel":"verbose"`), []byte(`"logLevel":"debug"`), 1)
	if err := os.WriteFile(conf, changed, multusThick.perm); err != nil {
		t.Fatal(err)
	}
	if res, err := in.Install(nil); err != nil || !res.Changed || res.File != list || res.Entry != EntryMissing {
		t.Fatalf("Install after the primary changed its .conf = %+v, %v", res, err)
	}
	if again := readFile(t, list); !bytes.Contains(again, []byte(`"logLevel":"debug"`)) {
		t.Fatalf("the list does not follow the .conf:\n%s", again)
	}

	if _, err := in.Uninstall(); err != nil {
		t.Fatal(err)
	}
	if back := readFile(t, conf); !bytes.Equal(back, changed) {
		t.Fatalf(".conf after uninstall %q, want %q", back, changed)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{uninstallMarker, multusThick.file}) {
		t.Fatalf("conf dir holds %v after uninstall", names)
	}
}

// The writer of a .conf removes it (Multus thick, when it stops): the
// list made from it goes at the next install, also when no other config
// is left; uninstall of a list whose .conf is gone removes it too.
func TestConvertedListFollowsItsSource(t *testing.T) {
	for _, uninstall := range []bool{false, true} {
		dir := confDir(t)
		conf := multusThick.place(t, dir)
		in := anyVersionInstaller(t, dir)
		if _, err := in.Install(nil); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(conf); err != nil {
			t.Fatal(err)
		}
		if uninstall {
			if _, err := in.Uninstall(); err != nil {
				t.Fatal(err)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{uninstallMarker}) {
				t.Fatalf("after uninstall the conf dir holds %v", names)
			}
			continue
		}
		if _, err := in.Install(nil); !errors.Is(err, ErrNoPrimary) {
			t.Fatalf("Install = %v; want no primary left", err)
		}
		if names := dirNames(t, dir); len(names) != 0 {
			t.Fatalf("the conf dir holds %v", names)
		}
	}
}

// legacyConversion lays out what rail's earlier versions made of Multus
// thick's .conf: NAME.conflist with rail's entry, the .conf removed, its
// bytes in the backup.
func legacyConversion(t *testing.T) (dir, legacy string, in *Installer) {
	t.Helper()
	dir = confDir(t)
	original := multusThick.bytes(t)
	list, err := listFromConf(original)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseDocument(list)
	if err != nil {
		t.Fatal(err)
	}
	in = anyVersionInstaller(t, dir)
	withRail, err := appendPlugin(doc, in.entry)
	if err != nil {
		t.Fatal(err)
	}
	legacy = filepath.Join(dir, "00-multus.conflist")
	if err := os.WriteFile(legacy, withRail, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, multusThick.file+backupSuffix), original, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, legacy, in
}

// The writer of a .conf that rail's earlier versions converted writes it
// again: the old list goes, the new layout takes over, and the writer's
// removal of its .conf then leaves nothing of rail's.
func TestLegacyConversionReplaced(t *testing.T) {
	dir, legacy, in := legacyConversion(t)
	conf := multusThick.place(t, dir)
	res, err := in.Install(nil)
	if err != nil || !res.Changed || res.Target != conf || res.File != filepath.Join(dir, "00-multus-rail.conflist") {
		t.Fatalf("Install = %+v, %v", res, err)
	}
	if exists(legacy) {
		t.Fatalf("%s, made from the .conf's past, is still there", legacy)
	}
	if err := os.Remove(conf); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Install(nil); !errors.Is(err, ErrNoPrimary) {
		t.Fatalf("Install = %v; want no primary left", err)
	}
}

// A list made by rail's earlier versions (NAME.conflist, the .conf
// removed) is still taken back by uninstall: the .conf comes back.
func TestUninstallLegacyConversion(t *testing.T) {
	dir, _, in := legacyConversion(t)
	original := multusThick.bytes(t)
	// Installs leave it be (the backup is not stale while the list is there).
	if res, err := in.Install(nil); err != nil || res.Changed {
		t.Fatalf("Install = %+v, %v", res, err)
	}
	if _, err := in.Uninstall(); err != nil {
		t.Fatal(err)
	}
	if back := readFile(t, filepath.Join(dir, multusThick.file)); !bytes.Equal(back, original) {
		t.Fatalf("restored .conf %q", back)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{uninstallMarker, multusThick.file}) {
		t.Fatalf("conf dir holds %v", names)
	}
}

// A changed entry is replaced where it stands; duplicates are dropped.
func TestInstallRefreshesStaleEntry(t *testing.T) {
	dir := confDir(t)
	f := listFixtures[0]
	path := f.place(t, dir)
	old := Config{Mode: ModeChained, ConfDir: dir, Entry: []byte(`{"type":"rail","mode":"macvlan"}`)}
	if err := old.Finish(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second one forces a duplicate, as a hand edit would
		doc, _ := parseDocument(readFile(t, path))
		data, err := appendPlugin(doc, old.Entry)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, f.perm); err != nil {
			t.Fatal(err)
		}
	}
	in := anyVersionInstaller(t, dir)
	res, err := in.Install(nil)
	if err != nil || !res.Changed || res.Entry != EntryStale {
		t.Fatalf("Install = %+v, %v; want the stale entry replaced", res, err)
	}
	edited := readFile(t, path)
	checkKept(t, f.bytes(t), edited)
	if bytes.Contains(edited, []byte("macvlan")) {
		t.Fatalf("old entry still there:\n%s", edited)
	}
	if _, err := in.Uninstall(); err != nil || !bytes.Equal(readFile(t, path), f.bytes(t)) {
		t.Fatalf("Uninstall: %v; bytes differ from the primary's", err)
	}
}

// Conditions of a node coming up, and bad files: a clear error, nothing written.
func TestInstallFailures(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		noDir   bool
		wantErr error
		wantMsg string
	}{
		{name: "no conf dir yet", noDir: true, wantErr: ErrNoConfDir},
		{name: "no primary yet", files: map[string]string{"calico-kubeconfig": "x", "10-calico.conflist.cilium_bak": "{}"}, wantErr: ErrNoPrimary},
		{name: "half-written file", files: map[string]string{"10-calico.conflist": `{"name": "k8s-pod-network", "plugins": [{"type": "cal`}, wantErr: ErrUnparsable},
		{name: "empty file (written in place, not yet filled)", files: map[string]string{"10-calico.conflist": ""}, wantErr: ErrUnparsable},
		{name: "list without name", files: map[string]string{"10-x.conflist": `{"plugins":[{"type":"bridge"}]}`}, wantErr: ErrUnparsable},
		{name: "duplicate key", files: map[string]string{"10-x.conflist": `{"name":"a","name":"b","plugins":[{"type":"bridge"}]}`}, wantErr: ErrUnparsable},
		{name: "empty plugins", files: map[string]string{"10-x.conflist": `{"name":"a","plugins":[]}`}, wantErr: ErrUnparsable},
		{name: "list in a .conf", files: map[string]string{"10-x.conf": `{"name":"a","type":"x","plugins":[{"type":"bridge"}]}`}, wantErr: ErrUnparsable},
		{name: "conf without type", files: map[string]string{"10-x.conf": `{"name":"a"}`}, wantErr: ErrUnparsable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := confDir(t)
			if tt.noDir {
				dir = filepath.Join(dir, "net.d")
			}
			for name, data := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			in := anyVersionInstaller(t, dir)
			res, err := in.Install(nil)
			if err == nil || res.Changed {
				t.Fatalf("Install = %+v, %v; want an error", res, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if tt.wantMsg != "" && !bytes.Contains([]byte(err.Error()), []byte(tt.wantMsg)) {
				t.Errorf("error %q, want it to say %q", err, tt.wantMsg)
			}
			if tt.noDir {
				return
			}
			for name, data := range tt.files {
				if got := readFile(t, filepath.Join(dir, name)); string(got) != data {
					t.Errorf("%s changed to %q", name, got)
				}
			}
			if names := dirNames(t, dir); len(names) != len(tt.files) {
				t.Errorf("conf dir holds %v: something was left behind", names)
			}
		})
	}
}

// The runtime's file is the lexically first .conf/.conflist/.json, as
// containerd and CRI-O pick it; rail edits that one only.
func TestInstallPicksTheRuntimesFile(t *testing.T) {
	dir := confDir(t)
	calico := listFixtures[0].place(t, dir)
	multus := listFixtures[6].place(t, dir)
	for _, other := range []string{"05-cilium.conflist.cilium_bak", "calico-kubeconfig", "01-x.conflist.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, other), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res, err := anyVersionInstaller(t, dir).Install(nil)
	if err != nil || res.File != multus {
		t.Fatalf("Install = %+v, %v; want %s", res, err, multus)
	}
	if !bytes.Equal(readFile(t, calico), listFixtures[0].bytes(t)) {
		t.Fatal("a file the runtime does not use was changed")
	}
}

// A guard refusing the write leaves the file as it was.
func TestInstallGuardRefuses(t *testing.T) {
	dir := confDir(t)
	path := listFixtures[1].place(t, dir)
	refuse := errors.New("refused")
	var asked Status
	res, err := anyVersionInstaller(t, dir).Install(func(st Status) error { asked = st; return refuse })
	if !errors.Is(err, refuse) || res.Changed || asked.Target != path || asked.Entry != EntryMissing {
		t.Fatalf("Install = %+v, %v (asked %+v)", res, err, asked)
	}
	if !bytes.Equal(readFile(t, path), listFixtures[1].bytes(t)) || len(dirNames(t, dir)) != 1 {
		t.Fatal("refused install changed the conf dir")
	}
}

// Uninstall keeps what others changed in the file since; only rail's entry goes.
func TestUninstallKeepsOtherChanges(t *testing.T) {
	f := listFixtures[0]
	_, path, in := installed(t, f)
	edited := bytes.Replace(readFile(t, path), []byte(`"snat": true`), []byte(`"snat": false`), 1)
	if err := os.WriteFile(path, edited, f.perm); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Uninstall(); err != nil {
		t.Fatal(err)
	}
	want := bytes.Replace(f.bytes(t), []byte(`"snat": true`), []byte(`"snat": false`), 1)
	if got := readFile(t, path); !bytes.Equal(got, want) {
		t.Fatalf("after uninstall:\n%s\nwant\n%s", got, want)
	}
}

func TestUninstallWithoutConfDir(t *testing.T) {
	dir := filepath.Join(confDir(t), "missing")
	changed, err := anyVersionInstaller(t, dir).Uninstall()
	if err != nil || changed != nil {
		t.Fatalf("Uninstall = %v, %v; want nothing to do", changed, err)
	}
}
