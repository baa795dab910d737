package fabric

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// onePortTwoPods: a prefill and a decode pod on node a share rail 0's port
// (both given GPU 0) in mode, and both write to a sink pod on node b at
// once (ib_write_bw over verbs, each on its own device and the env's GID
// index); each server sees its client's own rail address as the remote
// GID.
func onePortTwoPods(t *testing.T, a, b *node, mode api.Mode) {
	p1 := a.runPod(t, "prefill-"+string(mode), map[string]string{api.AnnotationGPUs: "0"})
	p2 := a.runPod(t, "decode-"+string(mode), map[string]string{api.AnnotationGPUs: "0"})
	sink := b.runPod(t, "sink-"+string(mode), map[string]string{api.AnnotationGPUs: "0"})
	var ends []endpointOf
	for _, p := range []*pod{p1, p2, sink} {
		if l := p.lease(t, "rail0"); l.Mode != mode {
			t.Errorf("node %s: pod %s: lease in mode %q, want %q", p.n.name, p.name, l.Mode, mode)
		}
		ends = append(ends, podEndpoint(t, p, "rail0", 0, "rail0"))
	}
	e1, e2, es := ends[0], ends[1], ends[2]
	ca, cb := a.counters(t), b.counters(t)
	port := 18800
	if mode == api.ModeIPVLAN {
		port = 18900
	}
	srv1 := b.start("sink server 1", exchangeTimeout, sink.command(writeBWVerbs(port, transferIters, "")))
	srv2 := b.start("sink server 2", exchangeTimeout, sink.command(writeBWVerbs(port+2, transferIters, "")))
	for _, j := range []*job{srv1, srv2} {
		if out, ok := j.waitOutput(writeBWReady, exchangeTimeout); !ok {
			t.Fatalf("%s never printed %q:\n%s", j.what, writeBWReady, out)
		}
	}
	cli1 := a.start("prefill client", exchangeTimeout, p1.command(retryScript(writeBWVerbs(port, transferIters, es.addr))))
	cli2 := a.start("decode client", exchangeTimeout, p2.command(retryScript(writeBWVerbs(port+2, transferIters, es.addr))))
	remotes := map[string]string{}
	for _, j := range []struct {
		j    *job
		want string // the client address a server must see
	}{{cli1, ""}, {cli2, ""}, {srv1, e1.addr}, {srv2, e2.addr}} {
		out, rc, err := j.j.wait(exchangeTimeout)
		if err != nil || rc != 0 {
			t.Fatalf("%s: exit %d %v\n%s", j.j.what, rc, err, out)
		}
		if j.want != "" {
			remotes[j.want] = remoteAddr(out)
		}
	}
	for want, got := range remotes {
		if got != want {
			t.Errorf("the server of the client at %s saw remote address %q: each pod's traffic must carry its own address", want, got)
		}
	}
	da, db := a.counters(t).delta(ca), b.counters(t).delta(cb)
	t.Logf("one port (%s): node a: %v; node b: %v", mode, da, db)
	s1, s2, r := da.rdmaTX[e1.dev], da.rdmaTX[e2.dev], db.rdmaRX[es.dev]
	if s1 == 0 || s2 == 0 || r == 0 {
		t.Errorf("%s sent %d, %s sent %d, %s received %d: want all above 0", e1.dev, s1, e2.dev, s2, es.dev, r)
	}
	if da.nicTX[0] < s1+s2 {
		t.Errorf("node a's rail-0 NIC sent %d frames, fewer than its two pods' %d+%d RDMA packets", da.nicTX[0], s1, s2)
	}
	if db.nicRX[0] < r {
		t.Errorf("node b's rail-0 NIC received %d frames, fewer than the sink's %d RDMA packets", db.nicRX[0], r)
	}
}

// remoteAddr is the IPv4 address in the remote GID ib_write_bw prints
// ("remote address: ..." then "GID: 00:...:255:255:10:77:00:11").
func remoteAddr(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "remote address") {
			continue
		}
		for _, g := range lines[i:min(i+3, len(lines))] {
			_, gid, ok := strings.Cut(g, "GID:")
			if !ok {
				continue
			}
			f := strings.Split(strings.TrimSpace(gid), ":")
			if len(f) != 16 {
				return ""
			}
			var b [4]byte
			for k := range 4 {
				v, err := strconv.Atoi(f[12+k])
				if err != nil || v > 255 {
					return ""
				}
				b[k] = byte(v)
			}
			return netip.AddrFrom4(b).String()
		}
	}
	return ""
}

// twoRails: a 2-GPU pod on each node gets a rail interface per GPU, both
// from pool flat (one subnet); an rping bound to the rail-1 address of
// node a's pod reaches the rail-1 address of node b's, and a write on the
// rail-1 devices moves data: all of it by rail 1's wire, none by rail 0's.
func twoRails(t *testing.T, a, b *node) {
	wa := a.runPod(t, "wide", map[string]string{api.AnnotationGPUs: "0,1", api.AnnotationPool: "flat"})
	wb := b.runPod(t, "wide", map[string]string{api.AnnotationGPUs: "0,1", api.AnnotationPool: "flat"})
	ends := map[*pod][2]endpointOf{}
	for _, p := range []*pod{wa, wb} {
		if len(p.leases) != 2 {
			t.Fatalf("node %s: pod %s: %d leases %+v, want two (one per GPU's NIC)", p.n.name, p.name, len(p.leases), p.leases)
		}
		var e [2]endpointOf
		for _, l := range p.leases {
			rail, ok := p.n.railOf(l)
			if !ok {
				t.Fatalf("node %s: pod %s: lease %+v on no rail NIC", p.n.name, p.name, l)
			}
			e[rail] = podEndpoint(t, p, l.IfName, rail, "flat")
		}
		ends[p] = e
	}
	a0, a1, b0, b1 := ends[wa][0], ends[wa][1], ends[wb][0], ends[wb][1]
	noRail0 := func(what string, da, db counters) {
		t.Helper()
		if da.rdmaTX[a0.dev]+da.rdmaRX[a0.dev]+db.rdmaTX[b0.dev]+db.rdmaRX[b0.dev] > 0 {
			t.Errorf("%s: the rail-0 devices moved packets (a %s: %d/%d, b %s: %d/%d): traffic crossed to rail 0", what,
				a0.dev, da.rdmaTX[a0.dev], da.rdmaRX[a0.dev], b0.dev, db.rdmaTX[b0.dev], db.rdmaRX[b0.dev])
		}
	}
	t.Run("rping bound to the rail-1 address (rdma_cm)", func(t *testing.T) {
		wc, ws := watch(t, wa, a1.dev, 1), watch(t, wb, b1.dev, 1)
		exchange(t, "rping rail 1", wb, rpingServer(b1.addr, 20), "", wa, rpingClient(b1.addr, a1.addr, 20))
		da, db := checkOnWire(t, "rping rail 1", wc, ws)
		noRail0("rping rail 1", da, db)
		if da.nicTX[0] >= da.nicTX[1] || db.nicRX[0] >= db.nicRX[1] {
			t.Errorf("rping rail 1: rail 0's NICs moved as much as rail 1's (a tx %d vs %d, b rx %d vs %d)", da.nicTX[0], da.nicTX[1], db.nicRX[0], db.nicRX[1])
		}
	})
	t.Run("ib_write_bw on the rail-1 devices (verbs)", func(t *testing.T) {
		wc, ws := watch(t, wa, a1.dev, 1), watch(t, wb, b1.dev, 1)
		gid := "-x ${NCCL_IB_GID_INDEX:?}"
		srv := fmt.Sprintf("stdbuf -oL ib_write_bw -d %s %s -p 19000 -n %d -s 65536", b1.dev, gid, transferIters)
		// ib_write_bw's own TCP exchange of QP numbers (its bootstrap, as
		// NCCL's runs over NCCL_SOCKET_IFNAME) goes to the peer's rail-0
		// address: an unbound socket leaves by the main table's first
		// route (rail 0's; perftest 4.5's --source_ip did not change that
		// in the rig's run: "Couldn't connect" to the rail-1 address), where, with
		// arp_ignore=1 on rails sharing a subnet, nothing answers for a
		// rail-1 address. The RDMA writes run between the rail-1 devices
		// (their GIDs hold the rail-1 addresses), judged on rail 1's wire.
		cli := fmt.Sprintf("ib_write_bw -d %s %s -p 19000 -n %d -s 65536 %s", a1.dev, gid, transferIters, b0.addr)
		exchange(t, "ib_write_bw rail 1", wb, srv, writeBWReady, wa, cli)
		da, db := checkOnWire(t, "ib_write_bw rail 1", wc, ws)
		noRail0("ib_write_bw rail 1", da, db)
	})
}

// killedWithPods: a pod on each node, raild SIGKILLed under it and started
// again; the restarted raild still holds the pods' leases, and their
// teardown goes through it (the caller checks that nothing is left).
func killedWithPods(t *testing.T, a, b *node) {
	var held []*pod
	for _, n := range []*node{a, b} {
		p := n.runPod(t, "held", map[string]string{api.AnnotationGPUs: "1"})
		podEndpoint(t, p, "rail0", 1, "rail1")
		held = append(held, p)
	}
	for _, p := range held {
		n := p.n
		from := len(n.read("raild.log"))
		n.run(t, "SIGKILL raild", time.Minute, fmt.Sprintf("bash %s raild-stop KILL", n.script("node.sh")))
		n.run(t, "start raild again", 3*time.Minute, fmt.Sprintf("bash %s raild-start", n.script("node.sh")))
		var sandboxes []string
		for _, l := range n.leases(t) {
			sandboxes = append(sandboxes, l.Sandbox)
		}
		if !slices.Contains(sandboxes, p.id) {
			t.Errorf("node %s: after the SIGKILL raild lost pod %s's lease (leases of %v)", n.name, p.name, sandboxes)
		}
		checkReady(t, p, from)
	}
	for _, p := range held {
		p.remove(t)
	}
}
