package nri

import (
	"errors"
	"fmt"
	"strings"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/pkg/api"
)

// maxAnnotationLen bounds the work one annotation can cause on the hook.
const maxAnnotationLen = 1024

// devicesAnnotation returns the rail.dev/devices value that applies to a
// container: rail.dev/devices.<container> wins over the pod-wide key.
func devicesAnnotation(pod *nriapi.PodSandbox, ctr *nriapi.Container) (key, value string, ok bool) {
	key = api.AnnotationDevices + "." + ctr.GetName()
	if value, ok = pod.GetAnnotations()[key]; ok {
		return key, value, true
	}
	key = api.AnnotationDevices
	value, ok = pod.GetAnnotations()[key]
	return key, value, ok
}

// annotatedDevices returns the devices a rail.dev/devices annotation chooses
// for a container, or nil. A refused annotation is logged with its reason
// and contributes nothing; the container still starts.
func (p *Plugin) annotatedDevices(call *hookCall) []namedDevice {
	key, value, ok := devicesAnnotation(call.pod, call.ctr)
	if !ok {
		return nil
	}
	devs, err := p.allowedDevices(call, value)
	if err != nil {
		call.log().Warn("refused device annotation: nothing injected from it",
			"annotation", key, "value", truncate(value, 128), "error", err)
		return nil
	}
	return devs
}

// allowedDevices resolves an annotation value, all or nothing: the
// namespace must be allowed, every entry must name one of this node's RDMA
// character devices, umad/issm only with nri.umad, and none may belong to
// a NIC that another pod holds in move mode (a uverbs node belongs to every
// port of its device).
func (p *Plugin) allowedDevices(call *hookCall, value string) ([]namedDevice, error) {
	pod := call.pod
	if err := p.namespaceAllowed(pod.GetNamespace()); err != nil {
		return nil, err
	}
	devs, err := call.node().devs.choose(value)
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		for _, nic := range d.owners {
			if holder, moved := p.movedElsewhere(pod, nic); moved {
				return nil, fmt.Errorf("%q belongs to %s, which is moved into another pod (sandbox %s); "+
					"a NIC in move mode is only its own pod's", d.name, nic, holder)
			}
		}
	}
	return devs, nil
}

// movedElsewhere tells whether a NIC is held in move mode by a sandbox other
// than pod's, and by which.
func (p *Plugin) movedElsewhere(pod *nriapi.PodSandbox, nic string) (string, bool) {
	holder, moved := p.state.NICMovedTo(nic)
	return holder, moved && holder != pod.GetId()
}

func (p *Plugin) namespaceAllowed(ns string) error {
	if p.cfg.annotatedNS.allows(ns) {
		return nil
	}
	return fmt.Errorf("namespace %q is not listed in nri.annotationNamespaces", ns)
}

// choose resolves a comma-separated list of device names. All or nothing:
// one bad entry refuses the whole list.
func (nd *nodeDevices) choose(value string) ([]namedDevice, error) {
	if len(value) > maxAnnotationLen {
		return nil, fmt.Errorf("value is %d bytes, more than %d", len(value), maxAnnotationLen)
	}
	var out []namedDevice
	for _, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		dev, err := nd.lookup(entry)
		if err != nil {
			return nil, err
		}
		out = append(out, dev)
	}
	if len(out) == 0 {
		return nil, errors.New("names no device; use names such as \"uverbs0,rdma_cm\"")
	}
	return out, nil
}

// lookup accepts only the bare name of one of this node's RDMA character
// devices.
func (nd *nodeDevices) lookup(name string) (namedDevice, error) {
	switch {
	case strings.Contains(name, ".."):
		return namedDevice{}, fmt.Errorf("%q contains \"..\"; name a device such as \"uverbs0\"", name)
	case strings.ContainsRune(name, '/'):
		return namedDevice{}, fmt.Errorf("%q is a path; name a device such as \"uverbs0\", not a file", name)
	case !isRDMADeviceName(name):
		return namedDevice{}, fmt.Errorf("%q is not an RDMA character device (uverbsN, umadN, issmN, rdma_cm)", name)
	}
	dev, ok := nd.byName[name]
	if !ok {
		return namedDevice{}, fmt.Errorf("%q does not exist on this node", name)
	}
	if isMADDeviceName(name) && !nd.umad {
		return namedDevice{}, fmt.Errorf("%q is a umad/issm node, which raild gives out only with nri.umad: true", name)
	}
	return dev, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
