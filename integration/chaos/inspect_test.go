package chaos

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// settle bounds the wait for the kernel's asynchronous work (a refunded
// stand-in's carrier, IPv6 link-local addresses) before a check must hold.
const settle = 15 * time.Second

// settleStep is how long the node must hold still to count as settled.
const settleStep = 200 * time.Millisecond

// requirePodsIntact checks that every live pod still has its rail
// interface with the address its ADD answered and, in move mode, that the
// interface is the NIC its lease names.
func requirePodsIntact(t *testing.T, f *fleet, live []*podRec, leases []api.Lease) {
	t.Helper()
	nicOf := map[string][]string{}
	for _, l := range leases {
		nicOf[l.Sandbox] = l.NICs
	}
	for _, rec := range live {
		if err := podIntact(f, rec, nicOf[rec.pod.Sandbox]); err != nil {
			t.Error(err)
		}
	}
}

func podIntact(f *fleet, rec *podRec, nics []string) error {
	link, ok, err := rec.pod.Link(rec.spec.kind.podIf)
	switch {
	case err != nil:
		return fmt.Errorf("pod %s (%s): %w", rec.spec.name, rec.spec.kind.name, err)
	case !ok:
		return fmt.Errorf("pod %s (%s, sandbox %s) is alive but has no %s", rec.spec.name, rec.spec.kind.name, rec.pod.Sandbox, rec.spec.kind.podIf)
	case !slices.Contains(link.Addrs, rec.addr):
		return fmt.Errorf("pod %s (%s): %s has %v, want %s", rec.spec.name, rec.spec.kind.name, link.Name, link.Addrs, rec.addr)
	case !rec.spec.kind.exclusive:
		return nil
	}
	for _, nic := range nics {
		s, ok := f.node.Fabric.ByName(f.node.Machine.Netdevs[nic])
		if ok && s.MAC.String() == link.MAC {
			return nil
		}
	}
	return fmt.Errorf("move pod %s: %s (MAC %s) is not the NIC its lease names (%v)", rec.spec.name, link.Name, link.MAC, nics)
}

// requireNICsHome checks that every NIC no live pod holds is back in the
// node netns under its own name, MTU and state, waiting briefly for the
// kernel to finish.
func requireNICsHome(t *testing.T, f *fleet, live []*podRec, leases []api.Lease) {
	t.Helper()
	moved := map[string]bool{}
	for _, rec := range live {
		moved[rec.pod.Sandbox] = rec.spec.kind.exclusive
	}
	away := map[string]bool{}
	for _, l := range leases {
		for _, nic := range l.NICs {
			away[nic] = away[nic] || moved[l.Sandbox]
		}
	}
	deadline := time.Now().Add(settle)
	for {
		problems := f.node.Fabric.PresentExcept(away)
		if len(problems) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("released NICs not back in the host as they were (after %s):\n%s", settle, strings.Join(problems, "\n"))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
