package cniconf

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testOptions keep the tests quick; the deadlines in waitFor only bound a
// hung test, they assert nothing about speed.
var testOptions = WatchOptions{Debounce: 20 * time.Millisecond, MinBackoff: 20 * time.Millisecond,
	MaxBackoff: 200 * time.Millisecond}

// startWatcher runs a watcher on dir until the test ends.
func startWatcher(t *testing.T, dir string, opt WatchOptions) *Watcher {
	t.Helper()
	w := newWatcher(anyVersionInstaller(t, dir), opt, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// waitFor waits until cond holds for the watcher's state.
func waitFor(t *testing.T, w *Watcher, what string, cond func(State) bool) State {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		changed := w.Changed()
		if st := w.State(); cond(st) {
			return st
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("gave up waiting for %s; state %+v", what, w.State())
		}
	}
}

func inPlace(st State) bool { return st.Phase == PhaseInPlace }

// The node comes up: no conf dir, then no primary, then a half-written
// file, then the primary's file. Each is reported; the entry lands once.
func TestWatcherWaitsForThePrimary(t *testing.T) {
	dir := filepath.Join(confDir(t), "net.d")
	w := startWatcher(t, dir, testOptions)
	st := waitFor(t, w, "no conf dir", func(st State) bool { return errors.Is(st.Err, ErrNoConfDir) })
	if st.Phase != PhaseRetrying || w.Ready() == nil {
		t.Fatalf("state %+v, ready %v: want retrying and not ready", st, w.Ready())
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, "no primary", func(st State) bool { return errors.Is(st.Err, ErrNoPrimary) })
	f := listFixtures[0]
	path := filepath.Join(dir, f.file)
	if err := os.WriteFile(path, f.bytes(t)[:40], 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, "unparsable", func(st State) bool { return errors.Is(st.Err, ErrUnparsable) })
	if err := os.WriteFile(path, f.bytes(t), 0o600); err != nil {
		t.Fatal(err)
	}
	st = waitFor(t, w, "in place", inPlace)
	if st.File != path || w.Ready() != nil {
		t.Fatalf("state %+v, ready %v", st, w.Ready())
	}
	checkKept(t, f.bytes(t), readFile(t, path))
}

// The watcher's own write causes a pass that writes nothing (content, not
// events, decides), and each rewrite by the primary gets the entry back.
func TestWatcherPutsEntryBackAfterRewrites(t *testing.T) {
	for _, f := range listFixtures {
		t.Run(f.name, func(t *testing.T) {
			dir := confDir(t)
			path := f.place(t, dir)
			w := startWatcher(t, dir, WatchOptions{Debounce: 20 * time.Millisecond, MinBackoff: 20 * time.Millisecond,
				FightReverts: 100})
			waitFor(t, w, "first insertion", func(st State) bool { return st.Writes == 1 && inPlace(st) })
			st := waitFor(t, w, "the pass caused by its own write", func(st State) bool { return st.Passes >= 2 })
			if st.Writes != 1 {
				t.Fatalf("its own write made it write again: %+v", st)
			}
			edited := readFile(t, path)

			// In place (Calico, Multus thick), then by rename (flannel, Cilium, kindnet, AWS).
			if err := os.WriteFile(path, f.bytes(t), f.perm); err != nil {
				t.Fatal(err)
			}
			waitFor(t, w, "back after an in-place rewrite", func(st State) bool { return st.Writes == 2 && inPlace(st) })
			if err := WriteFile(path, bytes.NewReader(f.bytes(t)), f.perm); err != nil {
				t.Fatal(err)
			}
			waitFor(t, w, "back after a rename-over", func(st State) bool { return st.Writes == 3 && inPlace(st) })
			if got := readFile(t, path); !bytes.Equal(got, edited) {
				t.Fatalf("after the rewrites:\n%s\nwant\n%s", got, edited)
			}
		})
	}
}

// ciliumExclusive plays Cilium's agent with cni.exclusive: it rewrites its
// file, by rename, whenever the bytes on disk differ from its own.
func ciliumExclusive(t *testing.T, path string, want []byte) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	var dw dirWatch
	if err := dw.watch(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		defer dw.close()
		for {
			select {
			case <-ctx.Done():
				return
			case <-dw.events():
				if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
					_ = WriteFile(path, bytes.NewReader(want), 0o600)
				}
			}
		}
	}()
}

// Against Cilium in exclusive mode the watcher stops after FightReverts
// reverts, leaves Cilium's file as Cilium wrote it, and says why.
func TestWatcherDetectsCiliumFight(t *testing.T) {
	dir := confDir(t)
	f := listFixtures[1]
	path := f.place(t, dir)
	ciliumExclusive(t, path, f.bytes(t))
	w := startWatcher(t, dir, testOptions)
	st := waitFor(t, w, "stopped", func(st State) bool { return st.Phase == PhaseStopped })
	if !errors.Is(st.Err, ErrFight) || st.Writes != 3 {
		t.Fatalf("state %+v: want a fight after 3 writes", st)
	}
	err := w.Ready()
	for _, want := range []string{"05-cilium.conflist", "cni.exclusive=false", "cni.chainingTarget", "3 times"} {
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("Ready() = %v; want it to say %q", err, want)
		}
	}
	// Cilium gets the last word; the file is Cilium's own bytes.
	waitForFile(t, path, f.bytes(t))
}

func waitForFile(t *testing.T, path string, want []byte) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got, _ := os.ReadFile(path); bytes.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held the expected bytes", path)
		}
	}
}

// raild install-cni --uninstall (preStop) while raild serve still runs:
// the entry goes, the primary's bytes come back, and the watcher does not
// put the entry back but says it was uninstalled.
func TestWatcherRespectsUninstall(t *testing.T) {
	dir := confDir(t)
	f := listFixtures[2]
	path := f.place(t, dir)
	w := startWatcher(t, dir, testOptions)
	waitFor(t, w, "in place", inPlace)
	if _, err := NewInstaller(chainedConfig(t, dir)).Uninstall(); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, w, "stopped", func(st State) bool { return st.Phase == PhaseStopped })
	if !errors.Is(st.Err, ErrUninstalled) || st.Writes != 1 {
		t.Fatalf("state %+v: want stopped by the uninstall, one write", st)
	}
	if got := readFile(t, path); !bytes.Equal(got, f.bytes(t)) {
		t.Fatalf("file after uninstall is not the primary's:\n%s", got)
	}
}

// A single-plugin .conf rewritten by its writer (Multus thick) is turned
// into the list again, without counting its own conversion as a revert.
func TestWatcherConvertsConfAgain(t *testing.T) {
	dir := confDir(t)
	multusThick.place(t, dir)
	w := startWatcher(t, dir, testOptions)
	st := waitFor(t, w, "converted", func(st State) bool { return st.Writes == 1 && inPlace(st) })
	list := filepath.Join(dir, "00-multus.conflist")
	if st.File != list {
		t.Fatalf("state %+v, want the entry in %s", st, list)
	}
	multusThick.place(t, dir)
	waitFor(t, w, "converted again", func(st State) bool { return st.Writes == 2 && inPlace(st) })
	if _, err := os.Stat(filepath.Join(dir, multusThick.file)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the .conf is back in front of the list: %v", err)
	}
}

// The conf dir is removed and made again (a node's CNI reset): the new
// primary file gets the entry, it is not taken for an uninstall.
func TestWatcherConfDirRecreated(t *testing.T) {
	dir := confDir(t)
	f := listFixtures[0]
	f.place(t, dir)
	w := startWatcher(t, dir, testOptions)
	waitFor(t, w, "in place", inPlace)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, "no conf dir", func(st State) bool { return errors.Is(st.Err, ErrNoConfDir) })
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := f.place(t, dir)
	st := waitFor(t, w, "in place again", func(st State) bool { return inPlace(st) && st.Writes == 2 })
	if st.File != path {
		t.Fatalf("state %+v", st)
	}
	checkKept(t, f.bytes(t), readFile(t, path))
}
