package topology

import (
	"fmt"
	"os"
)

// PodSoftRoCE reads a Soft-RoCE device rail made in a pod (its name has
// PodSoftRoCEPrefix) as Discover reads a NIC: its uverbs device, its one
// port's state, link layer and netdev. In shared RDMA netns mode the
// kernel shows every netns's device in the host's sysfs; a device that is
// not there (gone, or hidden in exclusive mode) is os.ErrNotExist.
func (s *Sysfs) PodSoftRoCE(device string) (NIC, error) {
	if !validName(device) || !IsPodSoftRoCE(device) {
		return NIC{}, fmt.Errorf("%q is not the name of a pod's soft-RoCE device (%s…)", device, PodSoftRoCEPrefix)
	}
	if !s.fs.exists(ibClassDir + "/" + device) {
		return NIC{}, fmt.Errorf("soft-RoCE device %s: %w in %s", device, os.ErrNotExist, s.fs.host(ibClassDir))
	}
	d := &discovery{fs: s.fs, cpus: s.cpus}
	nics := d.nic(device, d.deviceCharDevs(device))
	if len(nics) == 0 {
		return NIC{}, fmt.Errorf("soft-RoCE device %s: %w in %s", device, os.ErrNotExist, s.fs.host(ibClassDir))
	}
	nic := nics[0]
	if nic.Uverbs == nil {
		return nic, fmt.Errorf("soft-RoCE device %s has no uverbs device in %s (is ib_uverbs loaded?)", device, s.fs.host(verbsClassDir))
	}
	return nic, nil
}
