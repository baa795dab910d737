package service

import (
	"slices"

	"github.com/railcni/rail/pkg/rdma"
)

// StaleSoftRoCE picks, of the pods' rxe devices the kernel lists
// (rdma.PodSoftRoCEDevices), those no lease of this node explains: left by
// a pod whose lease is gone while its netns lives on (raild was down when
// its DEL came, or the undo of an ADD did not finish). A lease's device is
// never stale, whether or not the node is in softRoCE mode now.
func (s *Service) StaleSoftRoCE(devices []string) []string {
	live := map[string]bool{}
	for _, l := range s.alloc.Leases() {
		live[rdma.SoftRoCEName(l.Sandbox, l.IfName)] = true
	}
	var stale []string
	for _, d := range devices {
		if !live[d] && !slices.Contains(stale, d) {
			stale = append(stale, d)
		}
	}
	return stale
}
