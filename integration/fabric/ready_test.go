package fabric

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// doctor is `raild doctor --pod` for p, through its node's raild socket.
func (p *pod) doctor(t *testing.T) *api.PodReport {
	t.Helper()
	out, _, err := p.n.try("doctor --pod "+p.key(), time.Minute,
		fmt.Sprintf("%s doctor --pod %s --socket %s --json 2>/dev/null", p.n.raild(), p.key(), raildSocket))
	if err != nil {
		t.Fatal(err)
	}
	var r api.PodReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("node %s: doctor --pod %s --json: %v\n%s", p.n.name, p.key(), err, out)
	}
	return &r
}

// failing lists the checks of a report that did not pass or skip.
func failing(r *api.PodReport) []string {
	var out []string
	for _, c := range r.Checks {
		if c.Status != api.CheckPass && c.Status != api.CheckSkip {
			out = append(out, fmt.Sprintf("%s %s: %s (%s: %s)", c.Name, c.Subject, c.Status, c.Reason, c.Message))
		}
	}
	return out
}

// verdict is one judgement of raild's readiness tracker, as it logs every
// change of the rail.dev/RDMAReady condition it would hand to the API
// server (none on these nodes).
type verdict struct {
	Msg       string `json:"msg"`
	Component string `json:"component"`
	Pod       string `json:"pod"`
	Ready     bool   `json:"ready"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
}

// verdicts are the tracker's judgements of p in its node's raild log,
// from byte offset from.
func (p *pod) verdicts(from int) []verdict {
	log := p.n.read("raild.log")
	if from > len(log) {
		from = len(log)
	}
	var out []verdict
	sc := bufio.NewScanner(strings.NewReader(log[from:]))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var v verdict
		if json.Unmarshal(sc.Bytes(), &v) == nil && v.Component == "readiness" && v.Pod == p.key() &&
			strings.HasPrefix(v.Msg, "a pod's RDMA path") {
			out = append(out, v)
		}
	}
	return out
}

// verdictBound is how long the tracker may take to judge a change (it
// checks every pod every 5 s, and at once on a link event; TCG is slow).
const verdictBound = 2 * time.Minute

// waitVerdict waits for a judgement of p after offset from that has ready
// as want, and returns it.
func (p *pod) waitVerdict(t *testing.T, from int, want bool) verdict {
	t.Helper()
	deadline := time.Now().Add(verdictBound)
	for {
		for _, v := range p.verdicts(from) {
			if v.Ready == want {
				return v
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: raild's tracker never judged %s ready=%v within %v; its judgements: %+v",
				p.n.name, p.key(), want, verdictBound, p.verdicts(from))
		}
		time.Sleep(time.Second)
	}
}

// checkReady requires doctor --pod to pass every check for p and the
// tracker to have judged it ready after raild.log's offset from.
func checkReady(t *testing.T, p *pod, from int) {
	t.Helper()
	r := p.doctor(t)
	if !r.Ready || len(failing(r)) > 0 {
		t.Errorf("node %s: doctor --pod %s: ready %v, failing: %v", p.n.name, p.key(), r.Ready, failing(r))
	}
	names := map[string]bool{}
	for _, c := range r.Checks {
		names[c.Name] = true
	}
	t.Logf("node %s: doctor --pod %s: ready, checks %v", p.n.name, p.key(), names)
	p.waitVerdict(t, from, true)
}

// portDownFlipsReady sets the NIC of rail on p's node down: the pod's
// RDMA port follows and the tracker judges p not ready; back up, ready
// again (and doctor agrees each time).
func portDownFlipsReady(t *testing.T, p *pod, rail int) {
	t.Helper()
	n := p.n
	from := len(n.read("raild.log"))
	n.run(t, "set rail "+fmt.Sprint(rail)+"'s NIC down", time.Minute, "ip link set "+n.nics[rail].name+" down")
	down := p.waitVerdict(t, from, false)
	t.Logf("node %s: %s down: %s judged not ready: %s (%s)", n.name, n.nics[rail].name, p.key(), down.Reason, down.Message)
	if r := p.doctor(t); r.Ready {
		t.Errorf("node %s: doctor --pod %s says ready with its port's NIC down", n.name, p.key())
	}
	from = len(n.read("raild.log"))
	n.run(t, "set rail "+fmt.Sprint(rail)+"'s NIC up", time.Minute, "ip link set "+n.nics[rail].name+" up")
	up := p.waitVerdict(t, from, true)
	t.Logf("node %s: %s up: %s judged ready again (%s)", n.name, n.nics[rail].name, p.key(), up.Reason)
	if r := p.doctor(t); !r.Ready {
		t.Errorf("node %s: doctor --pod %s: not ready after the NIC came back: %v", n.name, p.key(), failing(r))
	}
}
