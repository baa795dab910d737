package fabric

import (
	"testing"
)

// onWire is one RDMA device's traffic on one rail's NIC, from two counter
// readings of its node.
type onWire struct {
	n      *node
	dev    string // the side's RDMA device
	rail   int
	before counters
}

func watch(t *testing.T, s side, dev string, rail int) *onWire {
	t.Helper()
	return &onWire{n: s.host(), dev: dev, rail: rail, before: s.host().counters(t)}
}

// moved is what went through since watch.
func (w *onWire) moved(t *testing.T) counters {
	t.Helper()
	return w.n.counters(t).delta(w.before)
}

// checkOnWire requires an exchange from cli to srv to have crossed the wire
// of their rail: each RDMA device moved packets, and each node's NIC of
// that rail moved at least as many as its RDMA device did (rxe's loopback
// path, where two QPs of one node talk without a frame, moves the RDMA
// counters and not the NIC's, so it cannot pass).
func checkOnWire(t *testing.T, what string, cli, srv *onWire) (cd, sd counters) {
	t.Helper()
	cd, sd = cli.moved(t), srv.moved(t)
	t.Logf("%s: node %s: %v; node %s: %v", what, cli.n.name, cd, srv.n.name, sd)
	sent, rcvd := cd.rdmaTX[cli.dev], sd.rdmaRX[srv.dev]
	if sent == 0 || rcvd == 0 {
		t.Errorf("%s: %s on node %s sent %d packets, %s on node %s received %d: want both above 0", what, cli.dev, cli.n.name, sent, srv.dev, srv.n.name, rcvd)
	}
	if cd.nicTX[cli.rail] < sent {
		t.Errorf("%s: node %s's rail-%d NIC sent %d frames, fewer than its %s's %d packets: they did not all leave by the wire",
			what, cli.n.name, cli.rail, cd.nicTX[cli.rail], cli.dev, sent)
	}
	if sd.nicRX[srv.rail] < rcvd {
		t.Errorf("%s: node %s's rail-%d NIC received %d frames, fewer than its %s's %d packets: they did not all come from the wire",
			what, srv.n.name, srv.rail, sd.nicRX[srv.rail], srv.dev, rcvd)
	}
	if back := cd.rdmaRX[cli.dev]; cd.nicRX[cli.rail] < back {
		t.Errorf("%s: node %s's rail-%d NIC received %d frames, fewer than the %d its %s received", what, cli.n.name, cli.rail, cd.nicRX[cli.rail], back, cli.dev)
	}
	return cd, sd
}
