package deviceplugin

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/pkg/topology"
)

// resource is one extended resource the plugin registers: its NICs, the
// device specs Allocate hands out and the socket kubelet calls back on.
type resource struct {
	name     string
	endpoint string // socket file name inside Config.Dir
	nics     []nicPorts
	specs    []*pluginapi.DeviceSpec
	count    int
}

// nicPorts names the ports whose state decides a NIC's health: the
// target's own port of its RDMA device (mlx4_0 port 2 for mlx4_0:2).
type nicPorts struct {
	device string
	ports  []int
}

// buildResources derives the node-wide resource and, with PerRail, one
// resource per rail.
func buildResources(s settings, m *topology.Machine, log *slog.Logger) ([]*resource, error) {
	var usable []*topology.NIC
	for i := range m.NICs {
		if m.NICs[i].Uverbs == nil {
			log.Warn("NIC has no uverbs device: not offered to pods", "nic", m.NICs[i].Name)
			continue
		}
		usable = append(usable, &m.NICs[i])
	}
	slices.SortFunc(usable, func(a, b *topology.NIC) int { return strings.Compare(a.Name, b.Name) })
	out := []*resource{newResource(s.ResourceName, s, m, usable)}
	if !s.PerRail {
		return out, nil
	}
	rails := s.Rails
	if len(rails) == 0 {
		for _, n := range usable {
			rails = append(rails, n.Name)
		}
	}
	for i, name := range rails {
		idx := slices.IndexFunc(usable, func(n *topology.NIC) bool { return n.Name == name })
		if idx < 0 {
			return nil, fmt.Errorf("devicePlugin.rails[%d]: NIC %q is not an RDMA device with a uverbs node on this node", i, name)
		}
		out = append(out, newResource(fmt.Sprintf("%s%d", s.RailPrefix, i), s, m, usable[idx:idx+1]))
	}
	return out, nil
}

func newResource(name string, s settings, m *topology.Machine, nics []*topology.NIC) *resource {
	r := &resource{name: name, endpoint: endpointFor(name), count: s.Count}
	for _, n := range nics {
		np := nicPorts{device: n.RDMADevice()}
		r.specs = appendSpec(r.specs, n.Uverbs)
		for _, p := range n.Ports {
			np.ports = append(np.ports, p.Num)
			if s.UMAD {
				r.specs = appendSpec(r.specs, p.Umad)
				r.specs = appendSpec(r.specs, p.Issm)
			}
		}
		r.nics = append(r.nics, np)
	}
	if m.RdmaCM != nil && len(nics) > 0 {
		r.specs = appendSpec(r.specs, m.RdmaCM)
	}
	return r
}

// appendSpec adds a char device once (the ports of a device share its uverbs).
func appendSpec(specs []*pluginapi.DeviceSpec, cd *topology.CharDev) []*pluginapi.DeviceSpec {
	if cd == nil || !strings.HasPrefix(cd.Path, "/dev/infiniband/") || strings.Contains(cd.Path, "..") {
		return specs
	}
	if slices.ContainsFunc(specs, func(s *pluginapi.DeviceSpec) bool { return s.HostPath == cd.Path }) {
		return specs
	}
	return append(specs, &pluginapi.DeviceSpec{ContainerPath: cd.Path, HostPath: cd.Path, Permissions: "rw"})
}

// endpointFor turns "rail.dev/rail0" into "rail.dev-rail0.sock".
func endpointFor(resourceName string) string {
	return strings.ReplaceAll(resourceName, "/", "-") + ".sock"
}

// deviceIDs are the virtual devices of a resource: "<last part>-<n>".
func (r *resource) deviceIDs() []string {
	_, base, _ := strings.Cut(r.name, "/")
	ids := make([]string, r.count)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", base, i)
	}
	return ids
}
