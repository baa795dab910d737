package sriov

import (
	"context"
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// vfConf is a NAD's config in vf mode with sriov-cni's keys, as product's
// netconf, with no NIC selector (every PF with a free VF is a candidate)
// and the keys of extra added: cni-args, maxDistance, deviceID, nics.
func (p *product) vfConf(t *testing.T, extra map[string]any) []byte {
	t.Helper()
	conf := map[string]any{"cniVersion": "1.0.0", "name": "vfnet", "type": "rail", "mode": "vf", "pool": "vf",
		"socket": p.raild.Socket, "vlan": 100, "vlanQoS": 3, "spoofchk": "off", "trust": "on", "max_tx_rate": 100}
	maps.Copy(conf, extra)
	b, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gpuArgs is Multus' cni-args naming the pod's GPUs.
func gpuArgs(gpus string) map[string]any {
	return map[string]any{"args": map[string]any{"cni": map[string]any{"gpus": gpus}}}
}

// leaseOf is r's only lease of sandbox.
func leaseOf(t *testing.T, r *harness.Raild, sandbox string) api.Lease {
	t.Helper()
	var found []api.Lease
	for _, l := range raildLeases(t, r) {
		if l.Sandbox == sandbox {
			found = append(found, l)
		}
	}
	if len(found) != 1 || len(found[0].NICs) != 1 || found[0].VF == "" {
		t.Fatalf("leases of %s: %+v, want one holding a VF (VF) on its PF's port (NICs)", sandbox, found)
	}
	return found[0]
}

// raildLeases is every lease r holds.
func raildLeases(t *testing.T, r *harness.Raild) []api.Lease {
	t.Helper()
	leases, err := api.NewClient(r.Socket, 5*time.Second).Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return leases
}
