package deviceplugin

import (
	"fmt"
	"slices"
	"strings"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/pkg/topology"
)

// resource is one extended resource the plugin registers, as one machine
// shows it: its NICs, the device specs Allocate hands out, its health and
// the socket kubelet calls back on.
type resource struct {
	name     string
	endpoint string   // socket file name inside Config.Dir
	nics     []string // the RDMA devices behind it
	specs    []*pluginapi.DeviceSpec
	health   string
	count    int // 0 when it has no NIC now
}

// usableNICs are the machine's NICs with a uverbs node, sorted by name,
// and the names of those without one.
func usableNICs(m *topology.Machine) (usable []*topology.NIC, skipped []string) {
	for i := range m.NICs {
		if m.NICs[i].Uverbs == nil {
			skipped = append(skipped, m.NICs[i].Name)
			continue
		}
		usable = append(usable, &m.NICs[i])
	}
	slices.SortFunc(usable, func(a, b *topology.NIC) int { return strings.Compare(a.Name, b.Name) })
	return usable, skipped
}

// railNICs is the NIC of each per-rail resource, fixed at start so rail
// indices never shift: Config.Rails, else the usable NICs sorted by name.
func railNICs(s settings, m *topology.Machine) ([]string, error) {
	if !s.PerRail {
		return nil, nil
	}
	usable, _ := usableNICs(m)
	if len(s.Rails) == 0 {
		rails := make([]string, len(usable))
		for i, n := range usable {
			rails[i] = n.Name
		}
		return rails, nil
	}
	for i, name := range s.Rails {
		if !slices.ContainsFunc(usable, func(n *topology.NIC) bool { return n.Name == name }) {
			return nil, fmt.Errorf("devicePlugin.rails[%d]: NIC %q is not an RDMA device with a uverbs node on this node", i, name)
		}
	}
	return s.Rails, nil
}

// buildResources derives, from one machine, the node-wide resource and
// one resource per rail; a rail whose NIC the machine lacks now has no
// devices.
func buildResources(s settings, m *topology.Machine, rails []string) []*resource {
	usable, _ := usableNICs(m)
	out := []*resource{newResource(s.ResourceName, s, m, usable)}
	for i, name := range rails {
		var nics []*topology.NIC
		if idx := slices.IndexFunc(usable, func(n *topology.NIC) bool { return n.Name == name }); idx >= 0 {
			nics = usable[idx : idx+1]
		}
		out = append(out, newResource(fmt.Sprintf("%s%d", s.RailPrefix, i), s, m, nics))
	}
	return out
}

func newResource(name string, s settings, m *topology.Machine, nics []*topology.NIC) *resource {
	r := &resource{name: name, endpoint: endpointFor(name), health: health(nics)}
	for _, n := range nics {
		r.nics = append(r.nics, n.Name)
		r.specs = appendSpec(r.specs, n.Uverbs)
		for _, p := range n.Ports {
			if s.UMAD {
				r.specs = appendSpec(r.specs, p.Umad)
				r.specs = appendSpec(r.specs, p.Issm)
			}
		}
	}
	if len(nics) > 0 {
		r.count = s.Count
		if m.RdmaCM != nil {
			r.specs = appendSpec(r.specs, m.RdmaCM)
		}
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
