package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// raildArgsEnv holds, in the copy of the test binary that plays raild, its
// `raild serve` arguments (one a line).
const raildArgsEnv = "RAIL_SERVE_TEST_ARGS"

// TestSIGHUPKeepsServing: a raild process (Run, in a copy of this test
// binary) that gets SIGHUP keeps its socket and answers on it, says in its
// log that it reloads nothing, and still stops cleanly on SIGTERM, its
// socket removed. SIGHUP's default action used to end it on the spot.
func TestSIGHUPKeepsServing(t *testing.T) {
	if args := os.Getenv(raildArgsEnv); args != "" {
		if err := Run(strings.Split(args, "\n")); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir, err := os.MkdirTemp("", "rf-hup-") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root, conf, socket := filepath.Join(dir, "root"), filepath.Join(dir, "raild.yaml"), filepath.Join(dir, "raild.sock")
	if _, err := fakesys.Write(root, "lab-1x1", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("pools:\n  - name: p\n    subnet: 10.9.0.0/24\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "raild.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^TestSIGHUPKeepsServing$")
	cmd.Env = append(os.Environ(), raildArgsEnv+"="+strings.Join([]string{"--config", conf, "--root", root, "--socket", socket,
		"--state-dir", filepath.Join(dir, "state"), "--node-name", "n1"}, "\n"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	stopped, done := make(chan struct{}), make(chan error, 1) // stopped closes once waitErr is set
	go func() { waitErr = cmd.Wait(); close(stopped); done <- waitErr }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // a no-op once it has stopped
		<-stopped
	})
	logTail := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	waitAnswers(t, socket, done)

	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !waitLog(logPath, "SIGHUP ignored", stopped) {
		state := "still running"
		select {
		case <-stopped:
			state = fmt.Sprintf("stopped: %v", waitErr)
		default:
		}
		t.Fatalf("raild did not log the SIGHUP (%s); log:\n%s", state, logTail())
	}
	if _, err := os.Lstat(socket); err != nil {
		t.Errorf("socket after SIGHUP: %v", err)
	}
	if _, err := api.NewClient(socket, 5*time.Second).Status(context.Background(), ""); err != nil {
		t.Errorf("raild does not answer after SIGHUP: %v; log:\n%s", err, logTail())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
		if waitErr != nil {
			t.Errorf("raild stopped on SIGTERM with %v; log:\n%s", waitErr, logTail())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("raild did not stop on SIGTERM; log:\n%s", logTail())
	}
	if _, err := os.Lstat(socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("raild left its socket behind (%v)", err)
	}
}

// waitLog polls the log file for text until the process stops; it reports
// whether the text came.
func waitLog(path, text string, stopped <-chan struct{}) bool {
	for range 200 {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), text) {
			return true
		}
		select {
		case <-stopped:
			b, _ := os.ReadFile(path)
			return strings.Contains(string(b), text)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return false
}
