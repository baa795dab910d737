package serve

import (
	"bytes"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func TestLeaseHolders(t *testing.T) {
	tests := []struct {
		name   string
		leases []ipam.Lease
		want   map[string]string
	}{
		{"none", nil, map[string]string{}},
		{"pod names", []ipam.Lease{{Sandbox: "s1", PodNamespace: "ns", PodName: "a", NICs: []string{"mlx5_0", "mlx5_1"}}},
			map[string]string{"mlx5_0": "ns/a", "mlx5_1": "ns/a"}},
		{"address only lease holds no NIC", []ipam.Lease{{Sandbox: "s2", PodName: "b"}}, map[string]string{}},
		{"no pod name: the sandbox", []ipam.Lease{{Sandbox: "s3", NICs: []string{"mlx5_2"}}}, map[string]string{"mlx5_2": "sandbox s3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := leaseHolders(tt.leases); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("leaseHolders = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNodeState(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "h100x8-cx7x4", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := fakesys.SetPortState(root, "mlx5_3", 1, "DOWN"); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := nodeState(inv, func() []topology.LeakedVF { return nil })()
	if state.Version != 1 || len(state.NICs) != 4 {
		t.Fatalf("state = %+v", state)
	}
	for _, n := range state.NICs {
		if n.Active != (n.Name != "mlx5_3") || n.InPod {
			t.Errorf("%+v: want active except mlx5_3, none in a pod", n)
		}
	}
}

// TestNodeStatePFs: each SR-IOV PF with its VFs enabled, at most, and
// held (by PCI address in vf mode, by RDMA device when moved), and those
// raild's VF sweep found leaked.
func TestNodeStatePFs(t *testing.T) {
	root := t.TempDir()
	spec, err := fakesys.Write(root, "h100x8-cx7x8-sriov", fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pf0 := spec.PFs[0]
	holders := map[string]string{pf0.VFs[0].PCI: "ns/a", pf0.VFs[2].RDMA: "ns/b", "mlx5_1": "ns/c"}
	inv, err := inventory.New(root, nil, func() map[string]string { return holders })
	if err != nil {
		t.Fatal(err)
	}
	leaked := []topology.LeakedVF{{PCI: pf0.VFs[3].PCI, Why: "admin MAC 0e:72:… no lease owns"}}
	state := nodeState(inv, func() []topology.LeakedVF { return leaked })()
	if len(state.PFs) != 8 {
		t.Fatalf("PFs %+v", state.PFs)
	}
	want := map[string]metrics.PFState{
		pf0.PCI:         {PCI: pf0.PCI, NIC: "mlx5_0", Total: 4, Enabled: 4, Used: 2, Leaked: 1},
		spec.PFs[1].PCI: {PCI: spec.PFs[1].PCI, NIC: "mlx5_1", Total: 4, Enabled: 4},
		spec.PFs[7].PCI: {PCI: spec.PFs[7].PCI, NIC: "mlx5_7", Total: 4},
	}
	for _, pf := range state.PFs {
		if w, ok := want[pf.PCI]; ok && pf != w {
			t.Errorf("PF %+v, want %+v", pf, w)
		}
	}
}

func TestReportChanges(t *testing.T) {
	tests := []struct {
		name   string
		change inventory.StateChange
		held   bool
		want   string // level and message
	}{
		{"held NIC down", inventory.StateChange{NIC: "mlx5_0", From: "ACTIVE", To: "DOWN"}, true,
			"WARN a NIC held by a pod is not ACTIVE: the pod keeps it, no new pod gets it"},
		{"free NIC down", inventory.StateChange{NIC: "mlx5_0", From: "ACTIVE", To: "DOWN"}, false, "INFO NIC state changed"},
		{"held NIC up", inventory.StateChange{NIC: "mlx5_0", From: "DOWN", To: "ACTIVE"}, true, "INFO NIC state changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			log := slog.New(slog.NewTextHandler(&out, nil))
			s := &inventory.Snapshot{Version: 2, Changes: []inventory.StateChange{tt.change}, Holders: map[string]string{}}
			if tt.held {
				s.Holders["mlx5_0"] = "ns/a"
			}
			reportChanges(s, log)
			_, msg, _ := strings.Cut(strings.TrimSpace(out.String()), " msg=")
			if !strings.Contains(out.String(), "level="+strings.Fields(tt.want)[0]) || !strings.Contains(msg, strings.SplitN(tt.want, " ", 2)[1]) {
				t.Fatalf("logged %q, want %q", out.String(), tt.want)
			}
			if tt.held != strings.Contains(out.String(), "pods=ns/a") {
				t.Errorf("holder named = %v, want %v: %s", !tt.held, tt.held, out.String())
			}
		})
	}
}
