package nri

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/pkg/topology"
)

// deviceDir is where every RDMA character device lives, inside and outside
// the container.
const deviceDir = "/dev/infiniband/"

// nicDevices is what one leased NIC (a port of an RDMA device: mlx5_0,
// mlx4_0:2) brings into a container, built once.
type nicDevices struct {
	name    string
	device  string                // RDMA device (mlx4_0 for mlx4_0:2): GID tables
	devices []*nriapi.LinuxDevice // the device's uverbsN, plus the port's umadN/issmN when configured
	hca     string                // NCCL_IB_HCA entry: "<dev>" for a single-port device, else "<dev>:<port>"
	ucx     string                // UCX_NET_DEVICES entry, "<dev>:<port>"
	port    int
	// linkLayer decides what the pod's env needs from the port's tables:
	// RoCE the GID of the pod's address, InfiniBand its P_Key's index.
	linkLayer topology.LinkLayer
	// soft: a pod's own rxe on a softRoCE node (softroce.go).
	soft bool
}

// namedDevice is one RDMA character device an annotation may choose.
type namedDevice struct {
	name string // uverbs0, umad1, rdma_cm
	dev  *nriapi.LinuxDevice
	nic  string // owning NIC (the first port of a shared uverbs); empty for rdma_cm
	// owners are every NIC the device serves: a uverbs node serves each
	// port of its RDMA device (mlx4_0 and mlx4_0:2), a umad node one port.
	owners []string
}

// nodeDevices is the node's RDMA character devices, indexed for the hook.
type nodeDevices struct {
	nics   map[string]*nicDevices
	rdmaCM *nriapi.LinuxDevice
	byName map[string]namedDevice
	umad   bool // umadN/issmN may be given out (nri.umad)
}

// nic is the devices of one of the node's NICs.
func (nd *nodeDevices) nic(name string) (*nicDevices, bool) {
	n, ok := nd.nics[name]
	return n, ok
}

// buildNodeDevices turns the topology into the tables CreateContainer reads.
// Device entries that are not well-formed RDMA character devices are left
// out with a logged reason, so that nothing else can ever be injected.
func buildNodeDevices(m *topology.Machine, withUMAD bool, log *slog.Logger) *nodeDevices {
	nd := &nodeDevices{nics: map[string]*nicDevices{}, byName: map[string]namedDevice{}, umad: withUMAD}
	if m.RdmaCM != nil {
		if dev, err := linuxDevice(m.RdmaCM); err != nil {
			log.Warn("rdma_cm not injectable", "error", err)
		} else {
			nd.rdmaCM = dev
			nd.byName[m.RdmaCM.Name] = namedDevice{name: m.RdmaCM.Name, dev: dev}
		}
	}
	for i := range m.NICs {
		nic := &m.NICs[i]
		if nic.NetdevOnly {
			continue // no RDMA device to give: a softRoCE node's pods get their own rxe (softroce.go)
		}
		nd.nics[nic.Name] = buildNIC(nic, withUMAD, nd.byName, log)
	}
	// A vf-mode lease holds its VF by PCI address (Lease.VF): the VF's own RDMA
	// device (an mlx5 VF's) is what its containers get.
	for _, pf := range m.PFs {
		for _, vf := range pf.VFs {
			if own, ok := nd.nics[vf.RDMA]; ok && vf.RDMA != "" {
				nd.nics[vf.PCI] = own
			}
		}
	}
	return nd
}

// buildNIC collects one target's devices: the uverbs node of its RDMA
// device (shared by the device's ports; an annotation naming it means the
// first port that offers it) and its own port's umad/issm.
func buildNIC(nic *topology.NIC, withUMAD bool, byName map[string]namedDevice, log *slog.Logger) *nicDevices {
	out := &nicDevices{name: nic.Name, device: nic.RDMADevice(), hca: nic.HCAName(), linkLayer: nic.LinkLayer}
	add := func(cd *topology.CharDev, inject bool) {
		if cd == nil {
			return
		}
		dev, err := linuxDevice(cd)
		if err != nil {
			log.Warn("RDMA device node not injectable", "nic", nic.Name, "error", err)
			return
		}
		named, known := byName[cd.Name]
		if !known {
			named = namedDevice{name: cd.Name, dev: dev, nic: nic.Name}
		}
		named.owners = append(named.owners, nic.Name)
		byName[cd.Name] = named
		if inject {
			out.devices = append(out.devices, dev)
		}
	}
	if nic.Uverbs == nil {
		log.Warn("NIC has no uverbs device: a container cannot open it", "nic", nic.Name)
	}
	add(nic.Uverbs, true)
	for j := range nic.Ports {
		p := &nic.Ports[j]
		add(p.Umad, withUMAD)
		add(p.Issm, withUMAD)
	}
	if len(nic.Ports) > 0 {
		out.port, out.ucx = nic.PortNum(), nic.UCXName()
	}
	return out
}

// linuxDevice checks one topology entry and makes the NRI device for it.
func linuxDevice(cd *topology.CharDev) (*nriapi.LinuxDevice, error) {
	if !isRDMADeviceName(cd.Name) {
		return nil, fmt.Errorf("%q is not an RDMA character device name", cd.Name)
	}
	if cd.Path != deviceDir+cd.Name {
		return nil, fmt.Errorf("%s: path %q is not %s%s", cd.Name, cd.Path, deviceDir, cd.Name)
	}
	if cd.Major == 0 {
		return nil, fmt.Errorf("%s: major number 0 (unnamed device) was read from sysfs", cd.Name)
	}
	return &nriapi.LinuxDevice{
		Path:     cd.Path,
		Type:     "c",
		Major:    int64(cd.Major),
		Minor:    int64(cd.Minor),
		FileMode: nriapi.FileMode(os.FileMode(0o666)),
	}, nil
}

// isRDMADeviceName accepts the names of the RDMA character devices, the
// only names this plugin ever injects: uverbsN, umadN, issmN, rdma_cm.
func isRDMADeviceName(name string) bool {
	if name == "rdma_cm" {
		return true
	}
	for _, prefix := range []string{"uverbs", "umad", "issm"} {
		if num, ok := strings.CutPrefix(name, prefix); ok {
			return isDigits(num)
		}
	}
	return false
}

// isMADDeviceName is true for umadN and issmN: management datagram access
// to the fabric, given out only with nri.umad.
func isMADDeviceName(name string) bool {
	return strings.HasPrefix(name, "umad") || strings.HasPrefix(name, "issm")
}

func isDigits(s string) bool {
	if s == "" || len(s) > 4 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
