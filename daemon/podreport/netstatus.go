package podreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"

	current "github.com/containernetworking/cni/pkg/types/100"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	nadutils "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/utils"

	"github.com/railcni/rail/daemon/service"
)

// entryKey names one network-status entry: rail owns the entries of its
// network's interfaces and no other.
type entryKey struct {
	Network   string
	Interface string
}

// entryChange puts an entry (Status set) or removes it (Status nil; only
// while it still shows IP, when IP is set).
type entryChange struct {
	Key    entryKey
	Status *nadv1.NetworkStatus
	IP     string
}

// attachedEntries are the network-status entries of an attachment's
// interfaces, built from a CNI result the way Multus builds its own.
func attachedEntries(a service.Attached) ([]entryChange, error) {
	out := make([]entryChange, 0, len(a.Interfaces))
	sandbox := a.Netns
	if sandbox == "" {
		sandbox = a.Sandbox
	}
	for _, iface := range a.Interfaces {
		res := &current.Result{CNIVersion: current.ImplementedSpecVersion,
			Interfaces: []*current.Interface{{Name: iface.Name, Mtu: iface.MTU, Sandbox: sandbox}}}
		for _, addr := range iface.Addresses {
			ip, ipnet, err := net.ParseCIDR(addr.CIDR)
			if err != nil {
				return nil, fmt.Errorf("interface %s address %q: %w", iface.Name, addr.CIDR, err)
			}
			ipnet.IP = ip
			res.IPs = append(res.IPs, &current.IPConfig{Interface: current.Int(0), Address: *ipnet})
		}
		statuses, err := nadutils.CreateNetworkStatuses(res, a.Network, false, deviceInfo(iface))
		if err != nil || len(statuses) != 1 {
			return nil, fmt.Errorf("interface %s: network status: %v", iface.Name, err)
		}
		out = append(out, entryChange{Key: entryKey{a.Network, iface.Name}, Status: statuses[0]})
	}
	return out, nil
}

// deviceInfo names the PCI function and RDMA device behind an interface.
func deviceInfo(iface service.AttachedInterface) *nadv1.DeviceInfo {
	if iface.NIC == nil {
		return nil
	}
	return &nadv1.DeviceInfo{Type: nadv1.DeviceInfoTypePCI, Version: nadv1.DeviceInfoVersion,
		Pci: &nadv1.PciDevice{PciAddress: iface.NIC.PCI, RdmaDevice: iface.NIC.RDMADevice}}
}

// releasedEntries remove a released attachment's interfaces.
func releasedEntries(r service.Released) []entryChange {
	out := make([]entryChange, 0, len(r.Interfaces))
	for _, iface := range r.Interfaces {
		ip, _, _ := strings.Cut(iface.Address, "/")
		out = append(out, entryChange{Key: entryKey{r.Network, iface.Name}, IP: ip})
	}
	return out
}

// parseStatus reads the annotation as it is: each entry stays the bytes
// its writer wrote (compacted), so fields this client does not know
// survive. Absent or empty is no entry.
func parseStatus(annotation string) ([]json.RawMessage, error) {
	if annotation == "" {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(annotation), &list); err != nil {
		return nil, fmt.Errorf("annotation %s is not a JSON list: %w", nadv1.NetworkStatusAnnot, err)
	}
	for i, raw := range list {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, fmt.Errorf("annotation %s entry %d: %w", nadv1.NetworkStatusAnnot, i, err)
		}
		list[i] = buf.Bytes()
	}
	return list, nil
}

// formatStatus writes the annotation the way Multus does (indented).
func formatStatus(list []json.RawMessage) (string, error) {
	out, err := json.MarshalIndent(list, "", "    ")
	return string(out), err
}

// mergeStatus applies rail's changes to the entries there: a put replaces
// the entry with its key in place or appends it, a removal drops it, and
// every other entry (the primary's, anyone else's) stays as it is and
// where it is. It tells whether anything changed.
func mergeStatus(list []json.RawMessage, changes []entryChange) ([]json.RawMessage, bool, error) {
	out := append([]json.RawMessage(nil), list...)
	for _, c := range changes {
		var put json.RawMessage
		if c.Status != nil {
			b, err := json.Marshal(c.Status)
			if err != nil {
				return nil, false, fmt.Errorf("network status of %s: %w", c.Key.Interface, err)
			}
			put = b
		}
		out = applyChange(out, c, put)
	}
	return out, !sameEntries(out, list), nil
}

// applyChange puts (put non-nil) or removes the entry of c.Key.
func applyChange(list []json.RawMessage, c entryChange, put json.RawMessage) []json.RawMessage {
	out := list[:0:0]
	placed := false
	for _, raw := range list {
		k, ips := keyOf(raw)
		if k != c.Key || (put == nil && c.IP != "" && !slices.Contains(ips, c.IP)) {
			out = append(out, raw)
			continue
		}
		if put != nil && !placed {
			out = append(out, put)
			placed = true
		}
	}
	if put != nil && !placed {
		out = append(out, put)
	}
	return out
}

// keyOf reads an entry's network name, interface and addresses; an entry
// that is not an object has no key rail could own.
func keyOf(raw json.RawMessage) (entryKey, []string) {
	var k struct {
		Name      string   `json:"name"`
		Interface string   `json:"interface"`
		IPs       []string `json:"ips"`
	}
	if json.Unmarshal(raw, &k) != nil {
		return entryKey{}, nil
	}
	return entryKey{k.Name, k.Interface}, k.IPs
}

func sameEntries(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
