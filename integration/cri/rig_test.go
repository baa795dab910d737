package cri

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// rig is one private containerd of the CRI rig (see setup.sh), with
// crictl pointed at it.
type rig struct {
	dir  string // the cache dir setup.sh printed (RAIL_CRI_RIG)
	run  string // RAIL_RIG_RUN of this test
	here string // integration/cri

	conflist string   // as given to start, for restart
	cniDirs  []string // as given to start
}

// requireRig skips unless RAIL_CRI_RIG names a built rig and we are root.
func requireRig(t *testing.T) *rig {
	t.Helper()
	dir := os.Getenv("RAIL_CRI_RIG")
	if dir == "" {
		t.Skip("RAIL_CRI_RIG is not set: run integration/cri/run.sh (or make test-cri)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the CRI rig needs root")
	}
	for _, f := range []string{"bin/containerd", "bin/runc", "bin/crictl", "cni/bin/ptp"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("RAIL_CRI_RIG=%s is not a built rig (%v): run integration/cri/setup.sh", dir, err)
		}
	}
	_, file, _, _ := runtime.Caller(0)
	return &rig{dir: dir, here: filepath.Dir(file)}
}

// repoBin is where `make build` puts raild and rail.
func (r *rig) repoBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("RAIL_BIN")
	if bin == "" {
		bin = filepath.Join(r.here, "../../bin")
	}
	bin, _ = filepath.Abs(bin)
	for _, name := range []string{"raild", "rail"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			t.Fatalf("%s/%s missing: run `make build` (or set RAIL_BIN)", bin, name)
		}
	}
	return bin
}

func (r *rig) env() []string {
	return append(os.Environ(), "RAIL_RIG_CACHE="+filepath.Dir(r.dir), "RAIL_RIG_RUN="+r.run)
}

// start runs start-containerd.sh with the conflist and extra CNI dirs.
func (r *rig) start(t *testing.T, conflist string, cniDirs ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(r.here, "start-containerd.sh"))
	r.conflist, r.cniDirs = conflist, cniDirs
	cmd.Env = append(r.env(), "RAIL_RIG_CONFLIST="+conflist, "RAIL_RIG_CNI_DIRS="+strings.Join(cniDirs, ":"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("start-containerd.sh: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
}

// restart stops containerd the way a crash or an upgrade does (pods and
// shims keep running) and starts it again with the same configuration.
func (r *rig) restart(t *testing.T) {
	t.Helper()
	pidFile := filepath.Join(r.run, "containerd.pid")
	var pid int
	if _, err := fmt.Sscan(readFile(pidFile), &pid); err != nil || pid <= 0 {
		t.Fatalf("no containerd pid in %s", pidFile)
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("stopping containerd: %v", err)
	}
	waitFor(t, "containerd to exit", func() bool { return proc.Signal(syscall.Signal(0)) != nil })
	r.start(t, r.conflist, r.cniDirs...)
}

// stop runs stop-containerd.sh (pods removed first, so CNI DEL runs); the
// run directory stays for the logs until the test's work dir goes.
func (r *rig) stop(t *testing.T) {
	cmd := exec.Command(filepath.Join(r.here, "stop-containerd.sh"))
	cmd.Env = r.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("stop-containerd.sh: %v\n%s", err, out)
	}
}

// crictl runs crictl against the rig and returns trimmed stdout.
func (r *rig) crictl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := r.crictlErr(args...)
	if err != nil {
		t.Fatalf("crictl %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func (r *rig) crictlErr(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(r.dir, "bin/crictl"),
		append([]string{"--config", filepath.Join(r.run, "crictl.yaml")}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", &cmdError{err: err, stderr: stderr.String()}
	}
	return strings.TrimSpace(string(out)), nil
}

type cmdError struct {
	err    error
	stderr string
}

func (e *cmdError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.stderr) }

// waitFor polls cond until it holds; the deadline only bounds a broken run.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// raild is the daemon under test, run from the repository's bin/.
type raild struct {
	cmd    *exec.Cmd
	socket string
	log    string
	done   chan error
}

func startRaild(t *testing.T, bin string, args ...string) *raild {
	t.Helper()
	d := &raild{done: make(chan error, 1)}
	for i, a := range args {
		if a == "--socket" && i+1 < len(args) {
			d.socket = args[i+1]
		}
	}
	dir := filepath.Dir(d.socket)
	d.log = filepath.Join(dir, "raild.log")
	logf, err := os.Create(d.log)
	if err != nil {
		t.Fatal(err)
	}
	d.cmd = exec.Command(filepath.Join(bin, "raild"), append([]string{"serve"}, args...)...)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("starting raild: %v", err)
	}
	go func() { d.done <- d.cmd.Wait(); logf.Close() }()
	client := api.NewClient(d.socket, 2*time.Second)
	waitFor(t, "raild's socket", func() bool {
		select {
		case err := <-d.done:
			d.done <- err
			t.Fatalf("raild exited: %v\n%s", err, readFile(d.log))
		default:
		}
		_, err := client.Leases(context.Background())
		return err == nil
	})
	return d
}

// stop sends SIGTERM and waits.
func (d *raild) stop(t *testing.T) {
	if d == nil || d.cmd.Process == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
		t.Errorf("raild ignored SIGTERM")
	}
}

func (d *raild) leases(t *testing.T) []api.Lease {
	t.Helper()
	leases, err := api.NewClient(d.socket, 5*time.Second).Leases(context.Background())
	if err != nil {
		t.Fatalf("raild leases: %v", err)
	}
	return leases
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}
