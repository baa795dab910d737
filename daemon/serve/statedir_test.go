package serve

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/statedir"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// stateDirEnv is a fake machine and a raild config around one state dir.
type stateDirEnv struct {
	cfg     *config.Config
	outside string // a file outside the state dir that raild must never touch
}

func newStateDirEnv(t *testing.T) *stateDirEnv {
	t.Helper()
	dir, root := machineDir(t, "lab-1x1")
	cfg := &config.Config{Root: root, Socket: filepath.Join(dir, "s.sock"), StateDir: filepath.Join(dir, "state"),
		NetnsDir: filepath.Join(dir, "netns"), NodeName: "n1", Pools: []ipam.PoolConfig{{Name: "p", Subnet: "10.9.0.0/24"}}}
	if err := cfg.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(cfg.NetnsDir, 0o700); err != nil { // no pods: a first start looks and finds none
		t.Fatal(err)
	}
	e := &stateDirEnv{cfg: cfg, outside: filepath.Join(dir, "precious")}
	if err := os.WriteFile(e.outside, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// serveOnce starts raild on the env, and stops it again once it answers;
// the error is the one it refused to start with.
func (e *stateDirEnv) serveOnce(t *testing.T) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, e.cfg, slog.New(slog.DiscardHandler)) }()
	client := api.NewClient(e.cfg.Socket, time.Second)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		select {
		case err := <-done:
			cancel()
			if err == nil {
				t.Fatal("raild stopped without an error before it answered")
			}
			return err
		case <-time.After(50 * time.Millisecond):
		}
		if _, err := client.Status(context.Background(), ""); err == nil {
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("raild stopped with %v", err)
			}
			return nil
		}
	}
	cancel()
	t.Fatalf("raild did not answer on %s within a minute: %v", e.cfg.Socket, <-done)
	return nil
}

// replacedByLink: after a first start, the state dir's file name is a
// link to the file outside.
func replacedByLink(name string) func(t *testing.T, e *stateDirEnv) {
	return func(t *testing.T, e *stateDirEnv) {
		mustServe(t, e)
		e.remove(t, name)
		if err := os.Symlink(e.outside, filepath.Join(e.cfg.StateDir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *stateDirEnv) remove(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.Remove(filepath.Join(e.cfg.StateDir, n)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServeStateDir: raild serve trusts its state dir only when it is
// root's, opens nothing there through a link (the file a link points to
// stays untouched), and does not start empty once its lease store was
// removed behind its back.
func TestServeStateDir(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, e *stateDirEnv) // the state dir before the start tested
		want    []string                           // in the refusal; none: raild starts
	}{
		{name: "genuine first start", prepare: func(*testing.T, *stateDirEnv) {}},
		{name: "restart", prepare: func(t *testing.T, e *stateDirEnv) { mustServe(t, e) }},
		{name: "world-writable state dir", prepare: func(t *testing.T, e *stateDirEnv) {
			if err := os.Mkdir(e.cfg.StateDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(e.cfg.StateDir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"lets group or others replace", "chmod 0700 "}},
		{name: "raild.lock is a symlink", prepare: replacedByLink("raild.lock"), want: []string{"raild.lock: a symbolic link"}},
		{name: "leases.db is a symlink", prepare: replacedByLink("leases.db"), want: []string{"leases.db: a symbolic link"}},
		{name: "leases.db.seq is a symlink", prepare: replacedByLink("leases.db.seq"), want: []string{"leases.db.seq: a symbolic link"}},
		{name: "inventory.json is a symlink", prepare: replacedByLink("inventory.json")}, // read through no link, then replaced by raild's own file
		{name: "lease store removed, NIC records left", prepare: func(t *testing.T, e *stateDirEnv) {
			mustServe(t, e)
			e.remove(t, "leases.db", "leases.db.seq")
		}, want: []string{"not raild's first start", "inventory.json", "raild recover --config <raild's config> --state-dir "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newStateDirEnv(t)
			tt.prepare(t, e)
			err := e.serveOnce(t)
			if data, rerr := os.ReadFile(e.outside); rerr != nil || string(data) != "precious" {
				t.Errorf("file outside the state dir = %q, %v; want it untouched", data, rerr)
			}
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("raild serve = %v, want a start", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("raild serve started; want a refusal with %q", tt.want)
			}
			line := "raild serve: " + err.Error()
			for _, w := range append(tt.want, e.cfg.StateDir) {
				if !strings.Contains(line, w) {
					t.Errorf("%q: want %q in it", line, w)
				}
			}
		})
	}
}

func mustServe(t *testing.T, e *stateDirEnv) {
	t.Helper()
	if err := e.serveOnce(t); err != nil {
		t.Fatalf("first start: %v", err)
	}
	if _, err := os.Lstat(statedir.RecordsFile(e.cfg.StateDir)); err != nil {
		t.Fatalf("first start left no NIC records: %v", err)
	}
}
