package cniconf

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rail accepts every cniVersion the CNI libraries know, so every real
// primary (0.3.1, 0.4.0, 1.0.0) gets the entry; a cniVersion rail does not
// know (skel would refuse every call) is refused, and the file left as is.
func TestInstallChecksCNIVersion(t *testing.T) {
	for _, f := range append(slices.Clone(listFixtures), multusThick) {
		t.Run(f.name, func(t *testing.T) {
			dir := confDir(t)
			f.place(t, dir)
			res, err := NewInstaller(chainedConfig(t, dir)).Install(nil)
			if err != nil || !res.Changed {
				t.Fatalf("Install = %+v, %v; want the entry inserted", res, err)
			}
		})
	}
	t.Run("unknown version", func(t *testing.T) {
		dir := confDir(t)
		path := filepath.Join(dir, "10-future.conflist")
		data := []byte(`{"cniVersion":"9.9.9","name":"future","plugins":[{"type":"ptp"}]}`)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := NewInstaller(chainedConfig(t, dir)).Install(nil)
		if !errors.Is(err, ErrCNIVersion) || res.Changed || !strings.Contains(err.Error(), `"9.9.9"`) {
			t.Fatalf("Install = %+v, %v; want it refused for cniVersion 9.9.9", res, err)
		}
		if !bytes.Equal(readFile(t, path), data) || !slices.Equal(dirNames(t, dir), []string{"10-future.conflist"}) {
			t.Fatal("a refused install changed the conf dir")
		}
	})
}

// An entry of another plugin is not held to rail's versions.
func TestInstallOtherPluginAnyVersion(t *testing.T) {
	dir := confDir(t)
	listFixtures[2].place(t, dir)
	cfg := Config{Mode: ModeChained, ConfDir: dir, Entry: []byte(`{"type":"rail-shim"}`)}
	if err := cfg.Finish(); err != nil {
		t.Fatal(err)
	}
	if res, err := NewInstaller(cfg).Install(nil); err != nil || !res.Changed {
		t.Fatalf("Install = %+v, %v", res, err)
	}
}

// The watcher reports the refusal in its state (/readyz) and keeps watching.
func TestWatcherReportsCNIVersion(t *testing.T) {
	dir := confDir(t)
	if err := os.WriteFile(filepath.Join(dir, "10-future.conflist"), []byte(`{"cniVersion":"9.9.9","name":"future","plugins":[{"type":"ptp"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(chainedConfig(t, dir), testOptions, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	st := waitFor(t, w, "refused", func(st State) bool { return errors.Is(st.Err, ErrCNIVersion) })
	if st.Phase != PhaseRetrying || w.Ready() == nil || !strings.Contains(w.Ready().Error(), "cni.mode nad") {
		t.Fatalf("state %+v, ready %v", st, w.Ready())
	}
}
