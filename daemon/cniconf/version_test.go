package cniconf

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// rail accepts cniVersion 0.4.0 and later (skel rejects any other on every
// call), so a rail entry goes only into primaries that declare one of those.
func TestInstallChecksCNIVersion(t *testing.T) {
	tests := []struct {
		f       fixture
		refused bool
	}{
		{listFixtures[0], false}, // calico 1.0.0
		{listFixtures[1], true},  // cilium 0.3.1
		{listFixtures[2], true},  // flannel 0.3.1
		{listFixtures[3], false}, // containerd 1.0.0
		{listFixtures[4], true},  // kindnet 0.3.1
		{listFixtures[5], false}, // aws 0.4.0
		{listFixtures[6], false}, // multus thin, the primary's 1.0.0
		{multusThick, true},      // multus thick 0.3.1
	}
	for _, tt := range tests {
		t.Run(tt.f.name, func(t *testing.T) {
			dir := confDir(t)
			path := tt.f.place(t, dir)
			res, err := NewInstaller(chainedConfig(t, dir)).Install(nil)
			if !tt.refused {
				if err != nil || !res.Changed {
					t.Fatalf("Install = %+v, %v; want the entry inserted", res, err)
				}
				return
			}
			if !errors.Is(err, ErrCNIVersion) || res.Changed || !strings.Contains(err.Error(), `"0.3.1"`) {
				t.Fatalf("Install = %+v, %v; want it refused for cniVersion 0.3.1", res, err)
			}
			if !bytes.Equal(readFile(t, path), tt.f.bytes(t)) || !slices.Equal(dirNames(t, dir), []string{tt.f.file}) {
				t.Fatal("a refused install changed the conf dir")
			}
		})
	}
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
	listFixtures[2].place(t, dir)
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
