package fabric

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// guest is one node's QEMU guest, driven through its job share (run.sh's
// $RUN/<node>, /run/rail-vm in the guest): a script dropped into q/ runs
// there as root, in the background, and leaves its output and exit code
// beside it (guest/agent).
type guest struct {
	name string // a, b
	dir  string // the job share on the host

	mu  sync.Mutex
	seq int
}

// job is a script running in a guest.
type job struct {
	g    *guest
	base string // q/<n> on the host, without suffix
	what string
}

// start drops script into the guest's queue; it runs with bash and is
// killed after timeout.
func (g *guest) start(what string, timeout time.Duration, script string) *job {
	g.mu.Lock()
	g.seq++
	n := fmt.Sprintf("%d-%06d", time.Now().UnixNano(), g.seq)
	g.mu.Unlock()
	base := filepath.Join(g.dir, "q", n)
	j := &job{g: g, base: base, what: what}
	_ = os.WriteFile(base+".timeout", []byte(strconv.Itoa(int(timeout.Seconds()))), 0o644)
	// renamed into place: the agent never runs half a script
	if err := os.WriteFile(base+".tmp", []byte(script), 0o644); err == nil {
		_ = os.Rename(base+".tmp", base+".sh")
	}
	return j
}

// wait returns the script's output and exit code once it ended. The
// agent's own timeout ends every script; a guest that died never answers,
// so wait gives up a minute after that.
func (j *job) wait(timeout time.Duration) (string, int, error) {
	deadline := time.Now().Add(timeout + time.Minute)
	for {
		if rc, err := os.ReadFile(j.base + ".rc"); err == nil {
			out, _ := os.ReadFile(j.base + ".out")
			code, err := strconv.Atoi(strings.TrimSpace(string(rc)))
			if err != nil {
				return string(out), -1, fmt.Errorf("node %s: %s: exit code %q", j.g.name, j.what, rc)
			}
			return string(out), code, nil
		}
		if time.Now().After(deadline) {
			return "", -1, fmt.Errorf("node %s: %s: no answer from the guest %v after its timeout", j.g.name, j.what, time.Minute)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ended reports whether the job ended, with its exit code.
func (j *job) ended() (int, bool) {
	rc, err := os.ReadFile(j.base + ".rc")
	if err != nil {
		return 0, false
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(rc)))
	return code, err == nil
}

// waitOutput waits until the job's output holds s (true), or the job
// ended or timeout passed without it (false); it returns the output.
func (j *job) waitOutput(s string, timeout time.Duration) (string, bool) {
	deadline := time.Now().Add(timeout)
	for {
		out, _ := os.ReadFile(j.base + ".out")
		if strings.Contains(string(out), s) {
			return string(out), true
		}
		if _, err := os.Stat(j.base + ".rc"); err == nil || time.Now().After(deadline) {
			out, _ = os.ReadFile(j.base + ".out")
			return string(out), strings.Contains(string(out), s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// try runs a script and returns its output and exit code.
func (g *guest) try(what string, timeout time.Duration, script string) (string, int, error) {
	return g.start(what, timeout, script).wait(timeout)
}

// run runs a script that must succeed and returns its output.
func (g *guest) run(t *testing.T, what string, timeout time.Duration, script string) string {
	t.Helper()
	out, rc, err := g.try(what, timeout, script)
	if err != nil {
		t.Fatal(err)
	}
	if rc != 0 {
		t.Fatalf("node %s: %s: exit code %d\n%s", g.name, what, rc, out)
	}
	return out
}

// guestPath is where the guest sees a file of its job share.
func (g *guest) guestPath(rel string) string { return filepath.Join("/run/rail-vm", rel) }

// write puts a file into the job share and returns its path in the guest.
func (g *guest) write(t *testing.T, rel string, data []byte) string {
	t.Helper()
	p := filepath.Join(g.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".tmp", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
	return g.guestPath(rel)
}

// read is a file of the job share ("" when missing).
func (g *guest) read(rel string) string {
	b, _ := os.ReadFile(filepath.Join(g.dir, rel))
	return string(b)
}
