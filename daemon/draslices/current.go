package draslices

import (
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/railcni/rail/daemon/podinfo"
)

// current is the slices to read: this node's GPU slices, and of each pool
// only those of its newest generation (a driver republishing a pool bumps
// the generation; older slices are stale until deleted).
func (s *Slices) current() []*resourcev1.ResourceSlice {
	type poolKey struct{ driver, pool string }
	newest := map[poolKey]int64{}
	var kept []*resourcev1.ResourceSlice
	for _, obj := range s.informer.GetStore().List() {
		slice, ok := obj.(*resourcev1.ResourceSlice)
		if !ok || !s.keep(slice) {
			continue
		}
		kept = append(kept, slice)
		key := poolKey{slice.Spec.Driver, slice.Spec.Pool.Name}
		if gen, seen := newest[key]; !seen || slice.Spec.Pool.Generation > gen {
			newest[key] = slice.Spec.Pool.Generation
		}
	}
	out := kept[:0]
	for _, slice := range kept {
		if slice.Spec.Pool.Generation == newest[poolKey{slice.Spec.Driver, slice.Spec.Pool.Name}] {
			out = append(out, slice)
		}
	}
	return out
}

// idAttributes are the attributes that identify a GPU, in order of
// preference: the PCI bus ID (NVIDIA's driver calls it pcieBusID; a MIG
// device carries its parent's), the parent GPU's UUID, the device's UUID.
var idAttributes = []string{"pcieBusID", "pciBusID", "parentUUID", "uuid"}

// gpuID is the identifying attribute of a listed device.
func gpuID(driver string, d resourcev1.Device, dev podinfo.DRADevice) (string, error) {
	for _, name := range idAttributes {
		if v := attribute(driver, d, name); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("DRA device %s (claim %s): its ResourceSlice gives none of the attributes %v; "+
		"a GPU driver must publish its PCI bus ID or UUID", dev, dev.Claim, idAttributes)
}

// attribute is a string attribute by its short name or qualified by the
// driver's domain (both name the same attribute), "" when absent.
func attribute(driver string, d resourcev1.Device, name string) string {
	for _, qualified := range []resourcev1.QualifiedName{resourcev1.QualifiedName(name), resourcev1.QualifiedName(driver + "/" + name)} {
		if a, ok := d.Attributes[qualified]; ok && a.StringValue != nil {
			return *a.StringValue
		}
	}
	return ""
}
