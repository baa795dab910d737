package podreport

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/pkg/api"
)

// Event reasons raild records on pods.
const (
	ReasonAttached      = "RailAttached"      // Normal: an interface with its NIC, distances and address
	ReasonNoNIC         = "RailNoNIC"         // Warning: no NIC free, close enough or matching the selector
	ReasonPoolExhausted = "RailPoolExhausted" // Warning: the pool has no free address on this node
	ReasonInvalidConfig = "RailInvalidConfig" // Warning: a pod annotation, cni-args or pool name is wrong
)

// noteLimit is the longest Event message the API server keeps whole.
const noteLimit = 1024

// eventNote is one Event: its type, reason and message.
type eventNote struct {
	Type, Reason, Message string
}

// attachedNotes is one Normal Event per interface of the attachment.
func attachedNotes(a service.Attached) []eventNote {
	notes := make([]eventNote, 0, len(a.Interfaces))
	for _, iface := range a.Interfaces {
		notes = append(notes, eventNote{Type: corev1.EventTypeNormal, Reason: ReasonAttached,
			Message: bounded(interfaceText(a, iface))})
	}
	return notes
}

// interfaceText says what one interface got: "rail0: NIC mlx5_0 (netdev
// ens1f0, PCI 0000:17:00.0, rail 0), address 10.77.0.2/24 from pool rail,
// mode move; GPU distances: 0 PIX (chose it), 2 SYS".
func interfaceText(a service.Attached, iface service.AttachedInterface) string {
	var b strings.Builder
	b.WriteString(iface.Name + ": ")
	if nic := iface.NIC; nic != nil {
		fmt.Fprintf(&b, "NIC %s (%s), ", nic.RDMADevice, nicDetails(nic))
	} else {
		b.WriteString("no NIC (address only), ")
	}
	fmt.Fprintf(&b, "address %s from pool %s, mode %s, network %s", addresses(iface.Addresses), iface.Pool, a.Mode, a.Network)
	switch {
	case len(iface.Distances) > 0:
		b.WriteString("; GPU distances: " + distances(iface.Distances))
	case iface.NIC != nil:
		b.WriteString("; no GPUs known: the selector alone chose the NIC")
	}
	return b.String()
}

func nicDetails(nic *api.NIC) string {
	parts := []string{"netdev " + nic.Netdev}
	if nic.PCI != "" {
		parts = append(parts, "PCI "+nic.PCI)
	}
	if nic.Rail != nil {
		parts = append(parts, fmt.Sprintf("rail %d", *nic.Rail))
	}
	return strings.Join(parts, ", ")
}

func addresses(addrs []api.Address) string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.CIDR
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ",")
}

func distances(ds []service.GPUDistance) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%d %s", d.GPU, d.Class)
		if d.Chose {
			out[i] += " (chose it)"
		}
	}
	return strings.Join(out, ", ")
}

// refusedNote is the Warning Event of a refused attachment: raild's error
// and what to do about it.
func refusedNote(r service.Refused) eventNote {
	reason, fix := ReasonInvalidConfig, "fix: correct the field named above in the pod's rail.dev annotations, its cni-args or the network's config"
	switch r.Err.Code {
	case api.CodeNoNIC:
		reason, fix = ReasonNoNIC, noNICFix(r.Err.Details)
	case api.CodePoolExhausted:
		reason, fix = ReasonPoolExhausted, "fix: free addresses of the pool (`raild leases` lists who holds them) or give the pool a larger per-node block"
	}
	return eventNote{Type: corev1.EventTypeWarning, Reason: reason,
		Message: bounded(fmt.Sprintf("network %s: %s; %s", r.Network, r.Err.Error(), fix))}
}

// noNICFix tells, from placement's explanation, why no NIC was usable
// and what fixes it.
func noNICFix(details string) string {
	switch {
	case strings.Contains(details, "distance bound"):
		return "none close enough: free one of the closer NICs named above, or raise maxDistance (netconf or pool) if a farther NIC will do"
	case strings.Contains(details, "not an RDMA device"), strings.Contains(details, "carries that rail"),
		strings.Contains(details, "no NIC in common"):
		return "the selector matches no NIC: correct the network's nics/rail selector, the pod's cni-args or the pool's NIC binding"
	default:
		return "none free: wait for or delete the pods holding the NICs (named above), use a sharing mode (macvlan, ipvlan, ipoib) instead of move, or run the pod on another node"
	}
}

// bounded cuts a message to what the API server keeps.
func bounded(s string) string {
	if len(s) <= noteLimit {
		return s
	}
	const more = " [...]"
	return s[:noteLimit-len(more)] + more
}
