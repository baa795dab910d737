package serve

import (
	"testing"

	"github.com/railcni/rail/daemon/draplugin"
	"github.com/railcni/rail/pkg/api"
)

// TestServiceClaims: the service gets, per pod, each prepared device with
// its NIC or VF, the claim's mode and pool and its VF keys parsed.
func TestServiceClaims(t *testing.T) {
	if serviceClaims(nil) != nil {
		t.Fatal("claims without dra.enabled")
	}
	claims, err := draplugin.OpenClaims(draplugin.ClaimsFile(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	vlan := 7
	if err := claims.Put(
		draplugin.Prepared{UID: "c1", Namespace: "ml", Name: "nic", Pods: []draplugin.PodRef{{Name: "a", UID: "ua"}},
			Devices: []draplugin.Assigned{{Device: "mlx5-0-vf1", NIC: "mlx5_0", VF: "0000:19:00.3", Kind: draplugin.KindVF,
				Params: draplugin.Params{Mode: api.ModeVF, Pool: "vfs", VFKeys: api.VFKeys{VLAN: &vlan}}}}},
		draplugin.Prepared{UID: "c2", Namespace: "ml", Name: "other", Pods: []draplugin.PodRef{{Name: "b", UID: "ub"}},
			Devices: []draplugin.Assigned{{Device: "mlx5-1", NIC: "mlx5_1", Kind: draplugin.KindShared, Params: draplugin.Params{Mode: api.ModeIPoIB}}}},
	); err != nil {
		t.Fatal(err)
	}
	got := serviceClaims(claims)("ml", "a", "ua")
	if len(got) != 1 {
		t.Fatalf("pod ml/a: %+v", got)
	}
	c := got[0]
	if c.Claim != "ml/nic" || c.NIC != "mlx5_0" || c.VF != "0000:19:00.3" || c.Mode != api.ModeVF || c.Pool != "vfs" ||
		c.VFKeys == nil || c.VFKeys.VLAN == nil || *c.VFKeys.VLAN != 7 {
		t.Errorf("claim %+v (VF keys %+v)", c, c.VFKeys)
	}
	if got := serviceClaims(claims)("ml", "a", "another-uid"); len(got) != 0 {
		t.Errorf("a pod of the same name with another UID got %+v", got)
	}
	if got := serviceClaims(claims)("default", "b", "ub"); len(got) != 0 {
		t.Errorf("another namespace got %+v", got)
	}
}
