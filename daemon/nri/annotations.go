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
func (p *Plugin) annotatedDevices(pod *nriapi.PodSandbox, ctr *nriapi.Container) []namedDevice {
	key, value, ok := devicesAnnotation(pod, ctr)
	if !ok {
		return nil
	}
	var devs []namedDevice
	err := p.namespaceAllowed(pod.GetNamespace())
	if err == nil {
		devs, err = p.devs.choose(value)
	}
	if err != nil {
		p.log.Warn("refused device annotation: nothing injected from it",
			"pod", pod.GetNamespace()+"/"+pod.GetName(), "container", ctr.GetName(),
			"annotation", key, "value", truncate(value, 128), "reason", err)
		return nil
	}
	return devs
}

func (p *Plugin) namespaceAllowed(ns string) error {
	if p.cfg.anyNS || p.cfg.allowedNS[ns] {
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
	return dev, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
