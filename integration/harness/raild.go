package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/railcni/rail/integration/child"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// raildStartTimeout bounds the wait for raild's socket to answer (many
// railds may start at once against one API server).
const raildStartTimeout = time.Minute

// DaemonConfig is the part of raild's YAML config the harness writes.
type DaemonConfig struct {
	Cooldown    string `json:"cooldown,omitempty"`
	MetricsAddr string `json:"metricsAddr,omitempty"`
	// Kubernetes is raild's kubernetes section (enabled, podWait, ...).
	Kubernetes map[string]string `json:"kubernetes,omitempty"`
	Pools      []ipam.PoolConfig `json:"pools"`
	// TopologyFile is raild's NCCL topology file ("" for none).
	TopologyFile string `json:"topologyFile,omitempty"`
	// NRI is raild's nri section (enabled, socket, memlock, ...); nil for none.
	NRI map[string]any `json:"nri,omitempty"`
}

// RaildOptions say how to run raild.
type RaildOptions struct {
	Bin          string // path of the raild binary
	Dir          string // config, socket, state and log live here
	Root         string // the fake machine root
	NodeName     string
	PodResources string // kubelet PodResources socket; "" for none
	Config       DaemonConfig
	Args         []string // more flags for raild serve (e.g. --kubeconfig)
	Netns        *NetNS   // where raild runs (the node netns); nil: the caller's netns
}

// Raild is a raild process running in the node netns.
type Raild struct {
	opt    RaildOptions
	Socket string
	Log    string      // path of its stderr
	proc   *child.Proc // nil before the first launch
}

// StartRaild writes the config and starts raild, returning once its socket
// answers.
func StartRaild(opt RaildOptions) (*Raild, error) {
	r, err := LaunchRaild(opt)
	if err != nil {
		return nil, err
	}
	return r, r.WaitReady()
}

// LaunchRaild writes the config and starts raild without waiting for it
// (WaitReady does; Exited tells when it stopped on its own).
func LaunchRaild(opt RaildOptions) (*Raild, error) {
	cfg, err := yaml.Marshal(opt.Config)
	if err != nil {
		return nil, fmt.Errorf("encode raild config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(opt.Dir, "raild.yaml"), cfg, 0o600); err != nil {
		return nil, fmt.Errorf("write raild config: %w", err)
	}
	r := &Raild{opt: opt, Socket: filepath.Join(opt.Dir, "raild.sock"), Log: filepath.Join(opt.Dir, "raild.log")}
	return r, r.launch()
}

// Start starts the process (again, after Stop) and waits until it serves.
func (r *Raild) Start() error {
	if err := r.launch(); err != nil {
		return err
	}
	return r.WaitReady()
}

func (r *Raild) launch() error {
	if r.Running() {
		return errors.New("raild is already running")
	}
	logFile, err := os.OpenFile(r.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("raild log: %w", err)
	}
	defer logFile.Close()
	// --netns-dir: every harness node's pods share the host's /run/netns, so a
	// fresh raild would take another test's pods in its pool for its own and
	// refuse to start (the lost-store check); its own dir holds none.
	args := []string{"serve", "--config", filepath.Join(r.opt.Dir, "raild.yaml"), "--root", r.opt.Root,
		"--socket", r.Socket, "--state-dir", r.StateDir(), "--node-name", r.opt.NodeName,
		"--netns-dir", filepath.Join(r.opt.Dir, "netns"), "--log-level", "debug"}
	if r.opt.PodResources != "" {
		args = append(args, "--pod-resources-socket", r.opt.PodResources)
	}
	cmd := exec.Command(r.opt.Bin, append(args, r.opt.Args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group: a Ctrl-C at the terminal stops the caller,
	// which then stops raild in order, instead of reaching both.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var enter func() error
	if r.opt.Netns != nil {
		enter = r.opt.Netns.enter
	}
	proc, err := child.Start(cmd, enter)
	if err != nil {
		return fmt.Errorf("start raild: %w", err)
	}
	r.proc = proc
	return nil
}

// StateDir is raild's --state-dir (its lease store).
func (r *Raild) StateDir() string { return filepath.Join(r.opt.Dir, "state") }

// Exited is closed when the process has exited.
func (r *Raild) Exited() <-chan struct{} { return r.proc.Done() }

// WaitReady waits until raild's socket answers; an exit or the deadline
// is an error carrying the end of its log.
func (r *Raild) WaitReady() error {
	client := api.NewClient(r.Socket, time.Second)
	deadline := time.Now().Add(raildStartTimeout)
	for {
		select {
		case <-r.proc.Done():
			return fmt.Errorf("raild exited at start (%v): %s", r.proc.Err(), r.LogTail(20))
		default:
		}
		if _, err := client.Pools(context.Background()); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			_ = r.Stop()
			return fmt.Errorf("raild did not answer on %s within %s: %s", r.Socket, raildStartTimeout, r.LogTail(20))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Running reports whether the process is alive.
func (r *Raild) Running() bool {
	if r.proc == nil {
		return false
	}
	select {
	case <-r.proc.Done():
		return false
	default:
		return true
	}
}

// PID is the process id of the running raild (0 when stopped).
func (r *Raild) PID() int {
	if !r.Running() {
		return 0
	}
	return r.proc.Pid()
}

// Stop sends SIGTERM and waits for the exit (SIGKILL after 10 s). Stopping
// a stopped raild is not an error.
func (r *Raild) Stop() error {
	if !r.Running() {
		return nil
	}
	if r.proc.Stop(10 * time.Second) {
		return fmt.Errorf("raild ignored SIGTERM for 10s and was killed: %s", r.LogTail(10))
	}
	err := r.proc.Err()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return fmt.Errorf("raild: %w", err)
	}
	if exitErr != nil && exitErr.ExitCode() != 0 {
		return fmt.Errorf("raild exited with %v after SIGTERM: %s", err, r.LogTail(10))
	}
	return nil
}

// Restart stops and starts raild (its reconcile runs at start).
func (r *Raild) Restart() error {
	if err := r.Stop(); err != nil {
		return err
	}
	return r.Start()
}

// LogTail returns the last n lines raild wrote.
func (r *Raild) LogTail(n int) string {
	data, err := os.ReadFile(r.Log)
	if err != nil {
		return "(no raild log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Kill sends SIGKILL, as a crash or the OOM killer would, and waits for the
// exit. Killing a stopped raild is not an error.
func (r *Raild) Kill() error {
	if !r.Running() {
		return nil
	}
	if err := r.proc.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("SIGKILL raild: %w", err)
	}
	<-r.proc.Done()
	return nil
}

// RaildDir makes a short temp dir for one raild (unix socket paths are
// limited to 107 bytes) holding the fake machine named machine under
// dir/root. The caller removes dir.
func RaildDir(prefix, machine string) (dir, root string, err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", "", fmt.Errorf("raild dir: %w", err)
	}
	root = filepath.Join(dir, "root")
	if _, err := fakesys.Write(root, machine, fakesys.Options{}); err != nil {
		_ = os.RemoveAll(dir)
		return "", "", fmt.Errorf("fake machine %s: %w", machine, err)
	}
	return dir, root, nil
}
