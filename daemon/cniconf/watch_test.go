package cniconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
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
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	for time.Now().Before(deadline) {
		if st := w.State(); cond(st) {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("gave up waiting for %s; state %+v", what, w.State())
	return State{}
}

func inPlace(st State) bool { return st.Phase == PhaseInPlace }

// watching is a conf dir with f placed and a watcher that put rail's entry in.
func watching(t *testing.T, f fixture, opt WatchOptions) (dir, path string, w *Watcher) {
	t.Helper()
	dir = confDir(t)
	path = f.place(t, dir)
	w = startWatcher(t, dir, opt)
	waitFor(t, w, "in place", func(st State) bool { return st.Writes == 1 && inPlace(st) })
	return dir, path, w
}

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
// file, by rename, whenever the bytes on disk differ from its own, until
// the returned stop is called (or the test ends).
func ciliumExclusive(t *testing.T, path string, want []byte) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
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
					renameOver(t, path, want)
				}
			}
		}
	}()
	return sync.OnceFunc(stop)
}

// renameOver writes data over path as a primary does: its own temp file,
// renamed.
func renameOver(t *testing.T, path string, data []byte) {
	tmp := path + ".primary-tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Error(err)
	}
}

// Against Cilium in exclusive mode the watcher pauses after FightReverts
// reverts, leaves Cilium's file as Cilium wrote it, and says why; once the
// conf dir has been quiet for FightPause it tries again, and with Cilium
// reconfigured (not exclusive) the entry stays.
func TestWatcherDetectsCiliumFight(t *testing.T) {
	dir := confDir(t)
	f := listFixtures[1]
	path := f.place(t, dir)
	stopCilium := ciliumExclusive(t, path, f.bytes(t))
	opt := testOptions
	opt.FightPause = 500 * time.Millisecond
	w := startWatcher(t, dir, opt)
	st := waitFor(t, w, "paused", func(st State) bool { return st.Phase == PhasePaused })
	if !errors.Is(st.Err, ErrFight) || st.Writes != 3 {
		t.Fatalf("state %+v: want a fight after 3 writes", st)
	}
	err := w.Ready()
	for _, want := range []string{"05-cilium.conflist", "cni.exclusive=false", "cni.chainingTarget", "3 times", "tries again"} {
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("Ready() = %v; want it to say %q", err, want)
		}
	}
	// Cilium gets the last word; the file is Cilium's own bytes.
	waitForFile(t, path, f.bytes(t))
	stopCilium()
	st = waitFor(t, w, "in place after the pause", inPlace)
	if st.Writes != 4 {
		t.Fatalf("state %+v: want the fourth write", st)
	}
	checkKept(t, f.bytes(t), readFile(t, path))
}

// A fight that goes on after the pause pauses again, for twice as long.
func TestWatcherFightAgainPausesLonger(t *testing.T) {
	dir := confDir(t)
	f := listFixtures[1]
	path := f.place(t, dir)
	ciliumExclusive(t, path, f.bytes(t))
	opt := testOptions
	opt.FightPause = 300 * time.Millisecond
	w := startWatcher(t, dir, opt)
	waitFor(t, w, "paused", func(st State) bool { return st.Phase == PhasePaused })
	st := waitFor(t, w, "paused again", func(st State) bool { return st.Phase == PhasePaused && st.Writes > 3 })
	if st.Writes != 6 || !bytes.Contains([]byte(st.Err.Error()), []byte("600ms")) {
		t.Fatalf("second pause: %+v; want it after 3 more writes, for 600ms", st)
	}
}

func waitForFile(t *testing.T, path string, want []byte) {
	t.Helper()
	poll(t, path+" to hold the expected bytes", func() bool {
		got, _ := os.ReadFile(path)
		return bytes.Equal(got, want)
	})
}

// waitForNames waits until dir holds exactly names.
func waitForNames(t *testing.T, dir string, names ...string) {
	t.Helper()
	poll(t, fmt.Sprintf("%s to hold %v", dir, names), func() bool { return slices.Equal(dirNames(t, dir), names) })
}

// poll checks cond until it holds; the deadline only bounds a hung test.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// raild install-cni --uninstall (preStop) while raild serve still runs:
// the entry goes, the primary's bytes come back, and the watcher does not
// put the entry back but says it was uninstalled, and takes the marker
// away. A raild that starts afterwards installs again.
func TestWatcherRespectsUninstall(t *testing.T) {
	f := listFixtures[2]
	dir, path, w := watching(t, f, testOptions)
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
	waitForNames(t, dir, f.file)
	w2 := startWatcher(t, dir, testOptions)
	waitFor(t, w2, "in place again", inPlace)
	checkKept(t, f.bytes(t), readFile(t, path))
}

// An uninstall while no raild serve runs leaves its marker; the next
// raild serve removes it and installs.
func TestWatcherStartsAfterUninstall(t *testing.T) {
	f := listFixtures[0]
	dir, path, in := installed(t, f)
	if _, err := in.Uninstall(); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(dir, uninstallMarker)) {
		t.Fatal("uninstall left no marker")
	}
	w := startWatcher(t, dir, testOptions)
	waitFor(t, w, "in place", inPlace)
	checkKept(t, f.bytes(t), readFile(t, path))
	if names := dirNames(t, dir); !slices.Equal(names, []string{f.file, f.file + backupSuffix}) {
		t.Fatalf("conf dir holds %v", names)
	}
}

// The uninstall happens while the primary's file does not parse (written
// in place, half done) or is gone: the watcher stops all the same, at once.
func TestWatcherUninstallWhileNoPrimary(t *testing.T) {
	f := listFixtures[0]
	breaks := []struct {
		name    string
		wantErr error
		spoil   func(t *testing.T, path string)
	}{
		{"half written", ErrUnparsable, func(t *testing.T, path string) {
			if err := os.WriteFile(path, f.bytes(t)[:30], f.perm); err != nil {
				t.Fatal(err)
			}
		}},
		{"removed", ErrNoPrimary, func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, br := range breaks {
		t.Run(br.name, func(t *testing.T) {
			dir, path, w := watching(t, f, testOptions)
			br.spoil(t, path)
			waitFor(t, w, br.name, func(st State) bool { return errors.Is(st.Err, br.wantErr) })
			if _, err := NewInstaller(chainedConfig(t, dir)).Uninstall(); err != nil {
				t.Fatal(err)
			}
			st := waitFor(t, w, "stopped", func(st State) bool { return st.Phase == PhaseStopped || st.Writes > 1 })
			if st.Phase != PhaseStopped || !errors.Is(st.Err, ErrUninstalled) {
				t.Fatalf("state %+v; want stopped by the uninstall", st)
			}
		})
	}
}

// A single-plugin .conf rewritten by its writer (Multus thick) with other
// bytes gets its list made again, without counting it as a revert.
func TestWatcherConvertsConfAgain(t *testing.T) {
	dir := confDir(t)
	conf := multusThick.place(t, dir)
	w := startWatcher(t, dir, testOptions)
	st := waitFor(t, w, "converted", func(st State) bool { return st.Writes == 1 && inPlace(st) })
	list := filepath.Join(dir, "00-multus-rail.conflist")
	if st.File != list {
		t.Fatalf("state %+v, want the entry in %s", st, list)
	}
	changed := bytes.Replace(multusThick.bytes(t), []byte(`"verbose"`), []byte(`"debug"`), 1)
	if err := os.WriteFile(conf, changed, multusThick.perm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, "made again", func(st State) bool { return st.Writes == 2 && inPlace(st) })
	if got := readFile(t, conf); !bytes.Equal(got, changed) {
		t.Fatalf("the .conf is not its writer's: %q", got)
	}
	if !bytes.Contains(readFile(t, list), []byte(`"debug"`)) {
		t.Fatal("the list does not follow the .conf")
	}
}

// The conf dir is removed and made again (a node's CNI reset): the new
// primary file gets the entry, it is not taken for an uninstall.
func TestWatcherConfDirRecreated(t *testing.T) {
	f := listFixtures[0]
	dir, _, w := watching(t, f, testOptions)
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

// The conf dir is laid out again faster than the debounce: removed and
// made again, or every file removed (rail's backup too) and the primary's
// written back. Either way the entry comes back and the watcher keeps
// watching: only install-cni --uninstall stops it.
func TestWatcherConfDirReLaidWithinDebounce(t *testing.T) {
	relays := []struct {
		name  string
		relay func(t *testing.T, dir string, f fixture)
	}{
		{"conf dir removed and made again", func(t *testing.T, dir string, f fixture) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			f.place(t, dir)
		}},
		{"every file removed and the primary's written again", func(t *testing.T, dir string, f fixture) {
			for _, name := range dirNames(t, dir) {
				if err := os.Remove(filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			f.place(t, dir)
		}},
	}
	for _, rl := range relays {
		t.Run(rl.name, func(t *testing.T) {
			f := listFixtures[0]
			// A long debounce, so the re-laying (microseconds) falls within it;
			// should a slow machine let it expire midway, the expected outcome
			// is the same.
			opt := testOptions
			opt.Debounce = time.Second
			dir, path, w := watching(t, f, opt)
			rl.relay(t, dir, f)
			st := waitFor(t, w, "the entry back (or a stop)", func(st State) bool {
				return st.Writes == 2 && inPlace(st) || st.Phase == PhaseStopped
			})
			if st.Phase == PhaseStopped {
				t.Fatalf("the watcher stopped: %v", st.Err)
			}
			checkKept(t, f.bytes(t), readFile(t, path))
			// Still watching: the next rewrite gets the entry back too.
			if err := os.WriteFile(path, f.bytes(t), f.perm); err != nil {
				t.Fatal(err)
			}
			waitFor(t, w, "the entry back after a later rewrite", func(st State) bool { return st.Writes == 3 && inPlace(st) })
		})
	}
}

// Multus thick stops and deletes its .conf: the list rail made from it goes
// too, and the next config (Calico's) becomes the runtime's, with rail.
func TestWatcherFollowsConfRemoval(t *testing.T) {
	dir := confDir(t)
	conf := multusThick.place(t, dir)
	calico := listFixtures[0]
	calicoPath := calico.place(t, dir)
	w := startWatcher(t, dir, testOptions)
	st := waitFor(t, w, "converted", func(st State) bool { return st.Writes == 1 && inPlace(st) })
	list := st.File
	if list == calicoPath {
		t.Fatalf("state %+v: want the entry in a list made from %s", st, conf)
	}
	if err := os.Remove(conf); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	waitFor(t, w, "Calico's file in use", func(st State) bool { return inPlace(st) && st.File == calicoPath })
	if _, err := os.Stat(list); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s, made from the removed %s, is still there: %v", list, conf, err)
	}
	checkKept(t, calico.bytes(t), readFile(t, calicoPath))
	if names := dirNames(t, dir); !slices.Equal(names, []string{calico.file, calico.file + backupSuffix}) {
		t.Fatalf("conf dir holds %v", names)
	}
}

// Multus' entrypoint, when it stops, makes its .conf invalid on purpose
// so that no pod starts: the list made from it goes, and the runtime reads
// the invalid file, as it would without rail. A valid .conf again gets
// its list back.
func TestWatcherFollowsConfInvalidated(t *testing.T) {
	dir := confDir(t)
	conf := multusThick.place(t, dir)
	w := startWatcher(t, dir, testOptions)
	st := waitFor(t, w, "converted", func(st State) bool { return st.Writes == 1 && inPlace(st) })
	list := st.File
	invalid := []byte("{Multus configuration intentionally invalidated to prevent pods from being scheduled.}\n")
	if err := os.WriteFile(conf, invalid, multusThick.perm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, "unparsable", func(st State) bool { return errors.Is(st.Err, ErrUnparsable) })
	if first, err := runtimeFile(dir); err != nil || first != conf || exists(list) {
		t.Fatalf("the runtime reads %s (%v); want %s, and %s gone", first, err, conf, list)
	}
	multusThick.place(t, dir)
	waitFor(t, w, "converted again", func(st State) bool { return st.Writes == 2 && inPlace(st) && st.File == list })
}

// steppingClock advances by step at every reading.
func steppingClock(step time.Duration) func() time.Time {
	var n atomic.Int64
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { return start.Add(time.Duration(n.Add(1)) * step) }
}

// The primary rewrites its file now and then (a restart, a config change),
// each time well after raild's write, four times within a minute: no fight.
func TestWatcherLegitimateRewritesAreNoFight(t *testing.T) {
	f := listFixtures[0]
	opt := testOptions
	opt.Now = steppingClock(8 * time.Second)
	_, path, w := watching(t, f, opt)
	for i := 2; i <= 5; i++ {
		if err := os.WriteFile(path, f.bytes(t), f.perm); err != nil {
			t.Fatal(err)
		}
		st := waitFor(t, w, fmt.Sprintf("write %d", i), func(st State) bool {
			return st.Writes == i && inPlace(st) || st.Err != nil && st.Phase != PhaseRetrying
		})
		if st.Err != nil {
			t.Fatalf("rewrite %d: %v", i-1, st.Err)
		}
	}
}
