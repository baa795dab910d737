package process

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"testing"
)

func TestStartTime(t *testing.T) {
	tests := []struct {
		name string
		stat string
		want uint64
		bad  bool
	}{
		{name: "plain", stat: "42 (sleep) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123456 2711552 250 18446744073709551615\n", want: 123456},
		{name: "command with spaces and parentheses", stat: "42 (a) b (c) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 77 2711552 250\n", want: 77},
		{name: "short", stat: "42 (sleep) S 1 42\n", bad: true},
		{name: "no command", stat: "42 sleep S 1", bad: true},
		{name: "not a number", stat: "42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 abc 1 1\n", bad: true},
		{name: "zero", stat: "42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 0 1 1\n", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := startTime([]byte(tt.stat))
			if (err != nil) != tt.bad || got != tt.want {
				t.Fatalf("startTime = %d, %v; want %d (error %v)", got, err, tt.want, tt.bad)
			}
		})
	}
}

// TestPinnedReads: reads go to the pinned process or fail with ErrGone:
// another start time (a reused pid), a process that exited before Open or
// between Open and the reads; a process that execs is still itself (same
// pid, same start time) and what it reads is its new image's.
func TestPinnedReads(t *testing.T) {
	self, err := Pin("/proc", os.Getpid())
	must(t, err)
	t.Run("self", func(t *testing.T) {
		d, err := Open("/proc", self)
		must(t, err)
		defer d.Close()
		if _, err := d.ReadFile("limits"); err != nil {
			t.Fatal(err)
		}
		if err := d.Alive(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.StatInRoot("/proc/self"); err != nil {
			t.Fatalf("stat in own root: %v", err)
		}
	})
	t.Run("another start time", func(t *testing.T) {
		if _, err := Open("/proc", Ref{Pid: self.Pid, Start: self.Start + 1}); !errors.Is(err, ErrGone) {
			t.Fatalf("Open = %v; want ErrGone", err)
		}
	})
	t.Run("not pinned", func(t *testing.T) {
		if _, err := Open("/proc", Ref{Pid: self.Pid}); !errors.Is(err, ErrGone) {
			t.Fatalf("Open = %v; want ErrGone", err)
		}
	})
	t.Run("exits mid-read", func(t *testing.T) {
		cmd := exec.Command("sleep", "1000")
		must(t, cmd.Start())
		ref, err := Pin("/proc", cmd.Process.Pid)
		must(t, err)
		d, err := Open("/proc", ref)
		must(t, err)
		defer d.Close()
		if _, err := d.ReadFile("environ"); err != nil {
			t.Fatal(err)
		}
		must(t, cmd.Process.Kill())
		_ = cmd.Wait()
		if err := d.Alive(); !errors.Is(err, ErrGone) {
			t.Fatalf("Alive after exit = %v; want ErrGone", err)
		}
		if _, err := d.ReadFile("environ"); err == nil {
			t.Fatal("read the environ of an exited process")
		}
		if _, err := Open("/proc", ref); !errors.Is(err, ErrGone) {
			t.Fatalf("Open after exit = %v; want ErrGone", err)
		}
	})
	t.Run("execs mid-read", func(t *testing.T) {
		cmd := exec.Command("sh", "-c", `read _; exec env RAIL_AFTER_EXEC=1 sh -c 'echo execed; read _'`)
		in, err := cmd.StdinPipe()
		must(t, err)
		out, err := cmd.StdoutPipe()
		must(t, err)
		must(t, cmd.Start())
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		ref, err := Pin("/proc", cmd.Process.Pid)
		must(t, err)
		d, err := Open("/proc", ref)
		must(t, err)
		defer d.Close()
		before, err := d.ReadFile("environ")
		must(t, err)
		_, err = io.WriteString(in, "go\n")
		must(t, err)
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "execed\n" {
			t.Fatalf("child said %q, %v", line, err)
		}
		after, err := d.ReadFile("environ")
		must(t, err)
		if err := d.Alive(); err != nil {
			t.Fatalf("Alive after exec = %v; want the same process", err)
		}
		if bytes.Contains(before, []byte("RAIL_AFTER_EXEC")) || !bytes.Contains(after, []byte("RAIL_AFTER_EXEC=1")) {
			t.Fatalf("environ before %q, after %q: want the new image's after the exec", before, after)
		}
	})
}
