package podinfotest

import (
	"fmt"
	"slices"

	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Claim is one ResourceClaim a container uses, as the kubelet reports it
// under dynamic_resources: the claim and the devices DRA allocated for it.
type Claim struct {
	Namespace string        `json:"namespace"`
	Name      string        `json:"name"`
	Devices   []ClaimDevice `json:"devices"`
}

// ClaimDevice is one allocated device: the DRA driver, the ResourceSlice
// pool it came from, its name in that pool and its CDI device names.
type ClaimDevice struct {
	Driver string   `json:"driver"`
	Pool   string   `json:"pool"`
	Device string   `json:"device"`
	CDI    []string `json:"cdi,omitempty"`
}

// validateClaims checks what the kubelet would never report: a claim
// without a name or namespace, or a device without driver, pool or name.
func validateClaims(at string, claims []Claim) []error {
	var errs []error
	for k, claim := range claims {
		where := fmt.Sprintf("%s.claims[%d]", at, k)
		if claim.Namespace == "" || claim.Name == "" {
			errs = append(errs, fmt.Errorf("%s: namespace and name must both be set", where))
		}
		for d, dev := range claim.Devices {
			if dev.Driver == "" || dev.Pool == "" || dev.Device == "" {
				errs = append(errs, fmt.Errorf("%s.devices[%d]: driver, pool and device must all be set", where, d))
			}
		}
	}
	return errs
}

func cloneClaims(claims []Claim) []Claim {
	if claims == nil {
		return nil
	}
	out := make([]Claim, len(claims))
	for i, claim := range claims {
		out[i] = Claim{Namespace: claim.Namespace, Name: claim.Name, Devices: make([]ClaimDevice, len(claim.Devices))}
		for j, dev := range claim.Devices {
			dev.CDI = slices.Clone(dev.CDI)
			out[i].Devices[j] = dev
		}
	}
	return out
}

// dynamicResources converts claims to the wire type, in the given order.
func dynamicResources(claims []Claim) []*podresourcesapi.DynamicResource {
	var out []*podresourcesapi.DynamicResource
	for _, claim := range claims {
		res := &podresourcesapi.DynamicResource{ClaimName: claim.Name, ClaimNamespace: claim.Namespace}
		for _, dev := range claim.Devices {
			cr := &podresourcesapi.ClaimResource{DriverName: dev.Driver, PoolName: dev.Pool, DeviceName: dev.Device}
			for _, name := range dev.CDI {
				cr.CdiDevices = append(cr.CdiDevices, &podresourcesapi.CDIDevice{Name: name})
			}
			res.ClaimResources = append(res.ClaimResources, cr)
		}
		out = append(out, res)
	}
	return out
}
