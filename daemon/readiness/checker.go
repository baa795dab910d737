package readiness

import (
	"fmt"
	"path/filepath"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
)

// Check names.
const (
	checkInterface = "interface"
	checkAddress   = "address"
	checkPort      = "port"
	checkLinkLayer = "link-layer"
	checkGID       = "gid"
	checkRDMANetns = "rdma-netns"
	checkDevices   = "device-nodes"
	checkMemlock   = "memlock"
)

// Checker runs the checks. Root is the root of /sys (as raild's --root);
// Proc is the procfs the containers' processes are read from (/proc on a
// node; tests lay out a fake one as the kernel does).
type Checker struct {
	ports *topology.PortReader
	proc  string
	// rdmaIn reports whether an RDMA device sits in a netns (rdma.InNetns).
	rdmaIn func(netnsPath, device string) (bool, error)
	// reads reads containers off the loop, bounded (bounded.go).
	reads *viewReads
}

// NewChecker reads ports below root and processes below proc.
func NewChecker(root, proc string) (*Checker, error) {
	ports, err := topology.NewPortReader(root)
	if err != nil {
		return nil, fmt.Errorf("readiness: %w", err)
	}
	if proc == "" {
		proc = "/proc"
	}
	c := &Checker{ports: ports, proc: filepath.Clean(proc), rdmaIn: rdma.InNetns}
	c.reads = newViewReads(c.View)
	return c, nil
}

// AbandonedReads is how many container reads the checks gave up on (a
// hung mount under a container's root) are still blocked.
func (c *Checker) AbandonedReads() int { return c.reads.Abandoned() }

// Run checks every rail interface and every container of a pod.
func (c *Checker) Run(p Pod) Result {
	var r Result
	if len(p.Rails) == 0 {
		r.Checks = append(r.Checks, fail(checkInterface, "pod", ReasonNoRail, "raild holds no rail interface for the pod",
			"the pod's leases are gone (released by a DEL or GC): delete the pod so it is placed again"))
	}
	for _, rail := range p.Rails {
		r.Checks = append(r.Checks, c.rail(rail)...)
	}
	for _, ctr := range p.Containers {
		r.Checks = append(r.Checks, c.container(ctr)...)
	}
	return r
}

// rail checks one interface: in the pod, up, addressed; its port; its GID;
// its RDMA device's netns.
func (c *Checker) rail(r Rail) []api.ReadinessCheck {
	var out []api.ReadinessCheck
	if r.DRA != nil && r.IfName == "" {
		out = append(out, skip(checkInterface, r.subject(), fmt.Sprintf("the %s driver's slice names no netdev for %s: only its RDMA port is checked",
			r.DRA.Driver, r.subject())))
	} else {
		out = c.inPod(r)
	}
	if r.Device == "" {
		// a vf-mode rail whose VF has no RDMA device of its own (igbvf)
		return append(out, skip(checkPort, r.subject(), r.subject()+" has no RDMA device of its own (a VF whose driver has none): no RDMA port to check"))
	}
	out = append(out, c.port(r)...)
	if r.Exclusive {
		out = append(out, c.rdmaNetns(r))
	}
	return out
}

// rdmaNetns checks that the RDMA device sits in the pod's netns.
func (c *Checker) rdmaNetns(r Rail) api.ReadinessCheck {
	in, err := c.rdmaIn(r.Netns, r.Device)
	switch {
	case err != nil:
		return fail(checkRDMANetns, r.subject(), ReasonRDMANotInPod,
			fmt.Sprintf("cannot list the RDMA devices of the pod's netns: %v", err),
			"the pod's netns must be readable by raild (hostPID, /var/run/netns mounted) and the node's kernel must have RDMA netlink")
	case !in:
		return fail(checkRDMANetns, r.subject(), ReasonRDMANotInPod,
			fmt.Sprintf("RDMA device %s is not in the pod's netns (exclusive RDMA netns mode)", r.Device),
			"the device went back to the host (driver reset or another tool moved it): delete the pod so it is placed again")
	}
	return pass(checkRDMANetns, r.subject(), fmt.Sprintf("RDMA device %s is in the pod's netns", r.Device))
}

// subject names the rail in checks: its interface in the pod, or a DRA
// NIC without a netdev by its RDMA port.
func (r Rail) subject() string {
	if r.IfName != "" {
		return r.IfName
	}
	return fmt.Sprintf("%s port %d", r.Device, r.Port)
}
