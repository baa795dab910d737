package verbs

import (
	"io"

	current "github.com/containernetworking/cni/pkg/types/100"
)

// Interface is one pod interface an ADD made or found, as its result
// names it.
type Interface struct {
	Name, MAC, PCI string
	MTU            int
	Addressing     Addressing
}

// PrintResult writes an ADD's result in the version the runtime asked
// for: the previous result (nil: none, a Multus delegate) with the
// interfaces in the pod's netns appended, each with its addresses and
// routes.
func PrintResult(w io.Writer, prev *current.Result, netns string, ifaces []Interface, cniVersion string) error {
	result := &current.Result{CNIVersion: current.ImplementedSpecVersion}
	if prev != nil {
		prev.CNIVersion = current.ImplementedSpecVersion
		result = prev
	}
	for _, iface := range ifaces {
		result.Interfaces = append(result.Interfaces, &current.Interface{Name: iface.Name, Mac: iface.MAC, Mtu: iface.MTU, Sandbox: netns, PciID: iface.PCI})
		iface.Addressing.AddTo(result, current.Int(len(result.Interfaces)-1))
	}
	return Print(w, result, cniVersion)
}
