package k8s

import (
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

// checkTold checks what raild told the cluster about a chained GPU pod it
// attached: one RailAttached Event per rail interface naming its NIC and
// address, and the rail interfaces in the pod's network-status (written by
// raild itself: no Multus here), each with its lease's address.
func (n *node) checkTold(t *testing.T, p pod, leases []api.Lease) {
	t.Helper()
	c := n.c
	var events []string
	waitFor(t, p.Name+"'s RailAttached Events", 30*time.Second, func() bool {
		events = c.railEvents(t, p.Name, "RailAttached")
		return len(events) >= len(leases)
	})
	for _, l := range leases {
		addr := l.Address
		found := false
		for _, msg := range events {
			if strings.HasPrefix(msg, l.IfName+": NIC "+l.NICs[0]+" ") && strings.Contains(msg, "address "+addr) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no RailAttached Event for %s (NIC %s, %s) among %q", p.Name, l.IfName, l.NICs[0], addr, events)
		}
	}
	var status []networkStatus
	waitFor(t, p.Name+"'s network-status", 30*time.Second, func() bool {
		status = c.podNetworkStatus(t, p.Name)
		return len(status) >= len(leases)
	})
	for _, l := range leases {
		ip := strings.Split(l.Address, "/")[0]
		found := false
		for _, s := range status {
			if s.Interface == l.IfName && len(s.IPs) == 1 && s.IPs[0] == ip {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: network-status %+v lacks %s with %s", p.Name, status, l.IfName, ip)
		}
	}
}

// railEvents lists the messages of the pod's Events with this reason.
func (c *cluster) railEvents(t *testing.T, pod, reason string) []string {
	t.Helper()
	var list struct {
		Items []struct {
			Message string `json:"message"`
		} `json:"items"`
	}
	c.getJSON(t, &list, "events", "-n", e2eNamespace, "--field-selector", "involvedObject.name="+pod+",reason="+reason)
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Message)
	}
	return out
}
