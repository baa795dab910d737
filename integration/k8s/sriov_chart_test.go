package k8s

import (
	"slices"
	"testing"
)

// TestChartSRIOV: the chart renders sriov (createVFs, ownPFs) and a pool's
// vf-mode keys into raild's config as raild reads them: a bare on/off in
// the values (a YAML bool) stays on/off.
func TestChartSRIOV(t *testing.T) {
	helm, chart := chartRig(t)
	out := run(t, helm, "template", "rail", chart,
		"--set-json", `sriov={"createVFs": [{"pfs": ["mlx5_0"], "numVFs": 4}], "ownPFs": ["mlx5_0", "0000:3b:00.0"]}`,
		"--set-json", `pools=[{"name": "tenant-a", "subnet": "10.78.0.0/24", "vfPerGPU": true, "vlan": 100, "vlanQoS": 3, "spoofchk": true, "trust": "off"}]`)
	cfg := loadRendered(t, out)
	p := cfg.Pools[0]
	if !slices.Equal(cfg.SRIOV.OwnPFs, []string{"mlx5_0", "0000:3b:00.0"}) || len(cfg.SRIOV.CreateVFs) != 1 ||
		p.VFPerGPU == nil || !*p.VFPerGPU || *p.VLAN != 100 || *p.VLANQoS != 3 || p.Spoofchk != "on" || p.Trust != "off" {
		t.Fatalf("rendered config lost sriov %+v or the pool's VF keys %+v", cfg.SRIOV, p)
	}
}
