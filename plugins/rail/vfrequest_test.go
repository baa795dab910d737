package main

import (
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/netconf"
)

// TestAllocateRequestCarriesVFKeys: vfPerGPU and the admin MAC asked
// (runtimeConfig's over the netconf's, written as raild compares them)
// reach raild; left out, raild decides.
func TestAllocateRequestCarriesVFKeys(t *testing.T) {
	tests := []struct {
		conf    string
		perGPU  string // "", "true", "false"
		wantMAC string
	}{
		{conf: `"mode":"vf"`},
		{conf: `"mode":"vf","vfPerGPU":true`, perGPU: "true"},
		{conf: `"mode":"vf","vfPerGPU":false`, perGPU: "false"},
		{conf: `"mode":"vf","mac":"02:00:00:00:00:AB"`, wantMAC: "02:00:00:00:00:ab"},
		{conf: `"mode":"vf","mac":"02:00:00:00:00:ab","runtimeConfig":{"mac":"02-00-00-00-00-CD"}`, wantMAC: "02:00:00:00:00:cd"},
	}
	for _, tt := range tests {
		conf, err := netconf.LoadRail([]byte(`{"cniVersion":"1.0.0","name":"n","type":"rail",` + tt.conf + `}`))
		if err != nil {
			t.Fatalf("LoadRail(%s): %v", tt.conf, err)
		}
		req := netconf.AllocateRequest(&skel.CmdArgs{ContainerID: "c1", IfName: "eth0"}, conf, &current.Result{}, netconf.PodKeys{})
		perGPU := ""
		if req.VFPerGPU != nil {
			perGPU = map[bool]string{true: "true", false: "false"}[*req.VFPerGPU]
		}
		if perGPU != tt.perGPU || req.MAC != tt.wantMAC {
			t.Errorf("%s: vfPerGPU %q mac %q, want %q and %q", tt.conf, perGPU, req.MAC, tt.perGPU, tt.wantMAC)
		}
	}
}
