package topology

import (
	"strconv"
	"strings"
)

// A placement target is one port of an RDMA device: a dual-port HCA is two
// targets, each with its own netdev, state, link layer, GID table and umad.
// Port 1 is named by the device alone ("mlx5_0"), so single-port NICs keep
// the names they always had; any other port is "<device>:<port>"
// ("mlx4_0:2"), the spelling NCCL_IB_HCA and UCX_NET_DEVICES use for a port.

// TargetName is the name of the target for one port of an RDMA device.
func TargetName(device string, port int) string {
	if port == 1 || port < 1 {
		return device
	}
	return device + ":" + strconv.Itoa(port)
}

// ParseTarget splits a target name into its RDMA device and port:
// "mlx4_0:2" is port 2 of mlx4_0, "mlx5_0" (or "mlx5_0:1") port 1.
func ParseTarget(name string) (device string, port int) {
	dev, num, ok := strings.Cut(name, ":")
	if !ok || dev == "" || strings.Contains(num, ":") {
		return name, 1
	}
	p, err := strconv.Atoi(num)
	if err != nil || p < 1 || num[0] == '+' {
		return name, 1
	}
	return dev, p
}

// canonicalTarget spells a target name the way discovery names it
// ("mlx5_0:1" is "mlx5_0").
func canonicalTarget(name string) string {
	return TargetName(ParseTarget(name))
}

// RDMADevice is the RDMA device the target is a port of (mlx4_0 for
// mlx4_0:2): the name sysfs, uverbs, GID tables and RDMA netns moves use.
func (n NIC) RDMADevice() string {
	switch {
	case n.NetdevOnly:
		return ""
	case n.Device != "":
		return n.Device
	}
	dev, _ := ParseTarget(n.Name)
	return dev
}

// SharesDevice reports whether two targets are ports of one RDMA device
// (mlx4_0 and mlx4_0:2; a target and itself). A netdev-only NIC has no
// RDMA device and shares none, but is itself.
func (n NIC) SharesDevice(o NIC) bool {
	if n.NetdevOnly || o.NetdevOnly {
		return n.NetdevOnly && o.NetdevOnly && n.Name == o.Name
	}
	return n.RDMADevice() == o.RDMADevice()
}

// PortNum is the target's port number (1 when unknown, 0 for a
// netdev-only NIC, which has no RDMA port).
func (n NIC) PortNum() int {
	switch {
	case n.NetdevOnly:
		return 0
	case n.Port > 0:
		return n.Port
	case len(n.Ports) > 0 && n.Ports[0].Num > 0:
		return n.Ports[0].Num
	}
	_, port := ParseTarget(n.Name)
	return port
}

// UCXName is the target as UCX_NET_DEVICES names it: "<device>:<port>".
func (n NIC) UCXName() string {
	return n.RDMADevice() + ":" + strconv.Itoa(n.PortNum())
}

// HCAName is the target as an NCCL_IB_HCA entry names it: the device alone
// for a single-port device (every port of it is this target), else
// "<device>:<port>", so NCCL uses the pod's port and not its sibling.
func (n NIC) HCAName() string {
	if n.DevicePorts <= 1 && n.PortNum() == 1 {
		return n.RDMADevice()
	}
	return n.UCXName()
}

// NICsByID lists the targets an ID names: a target name ("mlx5_0",
// "mlx4_0:2", "mlx4_0:1" for mlx4_0), or a PCI address, which names every
// port of that function. Nil when nothing matches.
func (m *Machine) NICsByID(id string) []NIC {
	key := strings.TrimSpace(id)
	if p := normalizePCI(key); p != "" {
		var out []NIC
		for _, n := range m.NICs {
			if n.PCI == p {
				out = append(out, n)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	if n, ok := m.nicByTarget(key); ok {
		return []NIC{n}
	}
	return nil
}

func (m *Machine) nicByTarget(name string) (NIC, bool) {
	want := canonicalTarget(name)
	for _, n := range m.NICs {
		if n.Name == name || n.Name == want {
			return n, true
		}
	}
	return NIC{}, false
}
