package main

import (
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
)

// TestAllocateRequestCarriesUnresolvedGPUs: the netconf's unresolvedGPUs
// reaches raild; left out, raild decides (the pool's, else fail).
func TestAllocateRequestCarriesUnresolvedGPUs(t *testing.T) {
	tests := []struct {
		conf string
		want string
	}{
		{conf: `{"cniVersion":"1.0.0","name":"n","type":"rail","unresolvedGPUs":"ignore"}`, want: api.UnresolvedGPUsIgnore},
		{conf: `{"cniVersion":"1.0.0","name":"n","type":"rail","unresolvedGPUs":"fail"}`, want: api.UnresolvedGPUsFail},
		{conf: `{"cniVersion":"1.0.0","name":"n","type":"rail"}`, want: ""},
	}
	for _, tt := range tests {
		conf, err := netconf.LoadRail([]byte(tt.conf))
		if err != nil {
			t.Fatalf("LoadRail(%s): %v", tt.conf, err)
		}
		req := netconf.AllocateRequest(&skel.CmdArgs{ContainerID: "c1", IfName: "eth0"}, conf, &current.Result{}, netconf.PodKeys{})
		if req.UnresolvedGPUs != tt.want {
			t.Errorf("%s: unresolvedGPUs = %q, want %q", tt.conf, req.UnresolvedGPUs, tt.want)
		}
	}
}
