package raild

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// TestRestartWithNICInPod: raild gives a pod a NIC in move mode, the NIC
// leaves the host as the kernel takes it into the pod (shared RDMA mode:
// its netdev; exclusive mode: its netdev and its RDMA device, which
// vanishes from /sys/class/infiniband while its uverbs entry stays), and
// raild is stopped before any rescan saw the move (no link event reaches a
// fake root; the timer is 30 s). The restarted raild must still know the
// NIC as the pod's, under its host netdev with its char devices; the pod's
// release frees it, and once the NIC is back a new pod gets it again.
func TestRestartWithNICInPod(t *testing.T) {
	tests := []struct {
		name      string
		exclusive bool
		sig       syscall.Signal
	}{
		{"shared mode, SIGTERM", false, syscall.SIGTERM},
		{"shared mode, SIGKILL", false, syscall.SIGKILL},
		{"exclusive mode, SIGTERM", true, syscall.SIGTERM},
		{"exclusive mode, SIGKILL", true, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRaild(t, "10.61.0.0/24")
			r.start()
			ctx := context.Background()
			nic := allocateMove(t, r, "sb-held")
			back := takeIntoPod(t, r.root, nic, tt.exclusive)
			if tt.sig == syscall.SIGKILL {
				r.kill()
			} else {
				r.stop()
			}
			r.start()

			report := topologyOf(t, r)
			got, ok := findNIC(report, nic.RDMADevice)
			switch {
			case !ok:
				t.Fatalf("the restarted raild does not know %s (NICs %v):\n%s", nic.RDMADevice, nicNames(report), r.logTail(20))
			case got.Netdev != nic.Netdev || got.UverbsName != nic.UverbsName || got.PCI != nic.PCI:
				t.Errorf("the restarted raild shows %s on %q with %q at %q, want %s with %s at %s",
					nic.RDMADevice, got.Netdev, got.UverbsName, got.PCI, nic.Netdev, nic.UverbsName, nic.PCI)
			}
			if report.Holders[nic.RDMADevice] != "ns/held" {
				t.Errorf("%s held by %q, want ns/held", nic.RDMADevice, report.Holders[nic.RDMADevice])
			}
			if err := r.client().Release(ctx, api.AttachmentRequest{Sandbox: "sb-held", CNIIfName: "rail0", Network: "n"}); err != nil {
				t.Fatalf("release after the restart: %v", err)
			}
			back()
			if again := allocateMove(t, r, "sb-next"); again.RDMADevice != nic.RDMADevice || again.Netdev != nic.Netdev {
				t.Errorf("the next pod got %s on %s, want the freed %s on %s", again.RDMADevice, again.Netdev, nic.RDMADevice, nic.Netdev)
			}
		})
	}
}

// allocateMove asks raild for one move-mode NIC for a pod of namespace ns
// named after the sandbox, as rail's ADD does.
func allocateMove(t *testing.T, r *raildProc, sandbox string) api.NIC {
	t.Helper()
	plan, err := r.client().Allocate(context.Background(), api.AllocateRequest{Sandbox: sandbox, Netns: r.netns,
		CNIIfName: "rail0", Network: "n", Mode: api.ModeMove, PodNamespace: "ns", PodName: sandbox[len("sb-"):],
		Annotations: map[string]string{api.AnnotationAttach: "true"}, MaxNICs: 1})
	if err != nil {
		t.Fatalf("allocate %s: %v", sandbox, err)
	}
	if len(plan.Interfaces) != 1 || plan.Interfaces[0].NIC == nil || plan.Interfaces[0].NIC.Netdev == "" {
		t.Fatalf("allocate %s: plan %+v, want one interface with a NIC and its netdev", sandbox, plan)
	}
	return *plan.Interfaces[0].NIC
}

// takeIntoPod does to the fake root what moving the NIC into a pod does
// to the host's sysfs: its netdev goes (directory and /sys/class/net
// link); in exclusive mode its RDMA device goes too (directory and
// /sys/class/infiniband link), its uverbs/umad entries and device nodes
// stay. The returned func puts everything back, as the pod's DEL does.
func takeIntoPod(t *testing.T, root string, nic api.NIC, exclusive bool) (back func()) {
	t.Helper()
	links := []string{filepath.Join(root, "sys/class/net", nic.Netdev)}
	if exclusive {
		links = append(links, filepath.Join(root, "sys/class/infiniband", nic.RDMADevice))
	}
	stash := t.TempDir()
	var moves [][2]string // from, to
	for i, link := range links {
		dir, err := filepath.EvalSymlinks(link)
		if err != nil {
			t.Fatalf("%s: %v", link, err)
		}
		moves = append(moves, [2]string{dir, filepath.Join(stash, fmt.Sprint("dir", i))},
			[2]string{link, filepath.Join(stash, fmt.Sprint("link", i))})
	}
	for _, m := range moves {
		if err := os.Rename(m[0], m[1]); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, m := range moves {
			if err := os.Rename(m[1], m[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// topologyOf is raild's live `topo` report.
func topologyOf(t *testing.T, r *raildProc) topology.Report {
	t.Helper()
	raw, err := r.client().Topology(context.Background())
	if err != nil {
		t.Fatalf("topology: %v", err)
	}
	var report topology.Report
	if err := json.Unmarshal(raw, &report); err != nil {
		t.Fatalf("topology answer: %v", err)
	}
	return report
}

func findNIC(r topology.Report, name string) (topology.NIC, bool) {
	for _, n := range r.NICs {
		if n.Name == name {
			return n, true
		}
	}
	return topology.NIC{}, false
}

func nicNames(r topology.Report) []string {
	names := make([]string, len(r.NICs))
	for i, n := range r.NICs {
		names[i] = n.Name
	}
	return names
}
