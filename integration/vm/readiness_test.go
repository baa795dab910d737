package vm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// raildCLI runs a raild subcommand against the node's raild and returns
// its output; a failing command fails the test.
func (n *guestNode) raildCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := n.raildCmd(args...).CombinedOutput()
	if err != nil {
		t.Errorf("raild %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (n *guestNode) raildCmd(args ...string) *exec.Cmd {
	return exec.Command(filepath.Join(n.railBin, "raild"), append(args, "--socket", n.socket)...)
}

// key is the pod as raild names it (the CNI args' namespace and name).
func (p *pod) key() string { return podNamespace + "/" + p.name }

// doctorText is `raild doctor --pod` as a person reads it, and whether it
// exited 0 (it fails when the pod is not RDMA-ready).
func (p *pod) doctorText(t *testing.T) (string, bool) {
	t.Helper()
	out, err := p.node.raildCmd("doctor", "--pod", p.key()).CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("raild doctor --pod %s: %v", p.key(), err)
	}
	return string(out), err == nil
}

// doctorReport is `raild doctor --pod --json`: the readiness checks raild
// makes now against the kernel and the containers' /proc.
func (p *pod) doctorReport(t *testing.T) *api.PodReport {
	t.Helper()
	cmd := p.node.raildCmd("doctor", "--pod", p.key(), "--json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output() // exits 1 when the pod is not ready: the JSON is still there
	var r api.PodReport
	if jerr := json.Unmarshal(out, &r); jerr != nil {
		t.Fatalf("raild doctor --pod %s --json: %v (%v)\n%s%s", p.key(), jerr, err, out, stderr.String())
	}
	if (err == nil) != r.Ready {
		t.Errorf("raild doctor --pod %s exited with %v for a report with ready=%v", p.key(), err, r.Ready)
	}
	return &r
}

// reportBound is how long raild may take to see a container just started
// (PostStartContainer, or Synchronize after a restart) and a check flip.
const reportBound = 2 * time.Minute

// waitReport asks doctor until cond holds and returns that report.
func (p *pod) waitReport(t *testing.T, what string, cond func(*api.PodReport) bool) *api.PodReport {
	t.Helper()
	deadline := time.Now().Add(reportBound)
	for {
		r := p.doctorReport(t)
		if cond(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after %v for %s; doctor --pod says:\n%s", reportBound, what, reportText(r))
		}
		time.Sleep(time.Second)
	}
}

// startedIn reports whether raild's report lists container name with its
// process.
func startedIn(r *api.PodReport, name string) bool {
	c, ok := containerOf(r, name)
	return ok && c.Pid > 0
}

func containerOf(r *api.PodReport, name string) (api.PodContainer, bool) {
	for _, c := range r.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return api.PodContainer{}, false
}

// checkOf finds the check of that name and subject.
func checkOf(r *api.PodReport, name, subject string) (api.ReadinessCheck, bool) {
	for _, c := range r.Checks {
		if c.Name == name && c.Subject == subject {
			return c, true
		}
	}
	return api.ReadinessCheck{}, false
}

// wantCheck requires the check of that name and subject to have status
// (and, for a failure, reason) and returns it.
func wantCheck(t *testing.T, r *api.PodReport, name, subject string, status api.CheckStatus, reason string) api.ReadinessCheck {
	t.Helper()
	c, ok := checkOf(r, name, subject)
	switch {
	case !ok:
		t.Errorf("doctor --pod has no %s check of %s:\n%s", name, subject, reportText(r))
	case c.Status != status || c.Reason != reason:
		t.Errorf("%s %s: %s %q (%s), want %s %q", subject, name, c.Status, c.Reason, c.Message, status, reason)
	default:
		t.Logf("[%s] %s %s: %s", c.Status, subject, name, c.Message)
	}
	return c
}

// reportText is a report's checks, one a line, for failure messages.
func reportText(r *api.PodReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ready=%v\n", r.Ready)
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "  [%s] %s %s %s: %s\n", c.Status, c.Subject, c.Name, c.Reason, c.Message)
	}
	for _, c := range r.Containers {
		fmt.Fprintf(&b, "  container %s pid %d injected %v present %v memlock %q env %v\n", c.Name, c.Pid, c.Injected, c.Present, c.Memlock, c.Env)
	}
	return b.String()
}

// verdict is one judgement of raild's readiness tracker as it logs it:
// the rail.dev/RDMAReady condition it would hand to its sink (the API
// server, absent in the VM).
type verdict struct {
	Msg       string `json:"msg"`
	Component string `json:"component"`
	Pod       string `json:"pod"`
	Ready     bool   `json:"ready"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
}

// verdicts are the tracker's judgements of pod in a raild log.
func verdicts(log, pod string) []verdict {
	var out []verdict
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var v verdict
		if json.Unmarshal(sc.Bytes(), &v) == nil && v.Component == "readiness" && v.Pod == pod &&
			strings.HasPrefix(v.Msg, "a pod's RDMA path") {
			out = append(out, v)
		}
	}
	return out
}

// waitVerdict waits until raild's log (from offset from) holds a
// judgement of pod that cond accepts, and returns it.
func (n *guestNode) waitVerdict(t *testing.T, from int, pod, what string, cond func(verdict) bool) verdict {
	t.Helper()
	var found verdict
	deadline := time.Now().Add(reportBound)
	for {
		all := verdicts(readText(n.raildLog)[from:], pod)
		for _, v := range all {
			if cond(v) {
				found = v
			}
		}
		if found.Msg != "" {
			return found
		}
		if time.Now().After(deadline) {
			t.Fatalf("raild's tracker never judged %s %s; its judgements: %+v", pod, what, all)
		}
		time.Sleep(time.Second)
	}
}
