package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestSecondRaildRefused: a raild started next to a live one, on the same
// socket or the same state dir, refuses to start, and the live one keeps
// its socket and answers; when the live one stops, its socket goes.
func TestSecondRaildRefused(t *testing.T) {
	dir, root := machineDir(t, "lab-1x1")
	newCfg := func(socket, state string) *config.Config {
		cfg := &config.Config{Root: root, Socket: filepath.Join(dir, socket), StateDir: filepath.Join(dir, state), NodeName: "n1",
			Pools: []ipam.PoolConfig{{Name: "p", Subnet: "10.9.0.0/24"}}}
		if err := cfg.Finish(); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	log := slog.New(slog.DiscardHandler)
	first := newCfg("a.sock", "state-a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, first, log) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("first raild: %v", err)
		}
		if _, err := os.Lstat(first.Socket); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("first raild left its socket behind (%v)", err)
		}
	}()
	waitAnswers(t, first.Socket, done)
	tests := []struct {
		name    string
		cfg     *config.Config
		wantErr string
	}{
		{name: "same socket, other state dir", cfg: newCfg("a.sock", "state-b"),
			wantErr: fmt.Sprintf("another raild is serving on it (pid %d)", os.Getpid())},
		{name: "same state dir, other socket", cfg: newCfg("b.sock", "state-a"),
			wantErr: fmt.Sprintf("in use by another raild (pid %d)", os.Getpid())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := serve(context.Background(), tt.cfg, log)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("second raild = %v, want an error with %q", err, tt.wantErr)
			}
			if _, err := api.NewClient(first.Socket, 5*time.Second).Status(context.Background(), ""); err != nil {
				t.Fatalf("first raild no longer answers: %v", err)
			}
		})
	}
}

// machineDir is a short temp dir (unix socket paths are limited) holding
// a built-in machine under root.
func machineDir(t *testing.T, machine string) (dir, root string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "rf-serve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root = filepath.Join(dir, "root")
	if _, err := fakesys.Write(root, machine, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	return dir, root
}

// waitAnswers polls the socket until raild answers (or stops early).
func waitAnswers(t *testing.T, socket string, done <-chan error) {
	t.Helper()
	client := api.NewClient(socket, time.Second)
	for range 600 {
		select {
		case err := <-done:
			t.Fatalf("raild stopped before answering: %v", err)
		default:
		}
		if _, err := client.Status(context.Background(), ""); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("raild did not answer on %s", socket)
}
