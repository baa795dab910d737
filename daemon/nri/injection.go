package nri

import (
	"maps"
	"slices"

	nriapi "github.com/containerd/nri/pkg/api"
)

// injection collects the devices and NICs of one container, each once.
type injection struct {
	devices []*nriapi.LinuxDevice
	nics    []*nicDevices
	paths   map[string]bool
}

func newInjection(capacity int) *injection {
	return &injection{
		devices: make([]*nriapi.LinuxDevice, 0, capacity),
		paths:   make(map[string]bool, capacity),
	}
}

// clone is a copy to add to.
func (in *injection) clone() *injection {
	return &injection{devices: slices.Clone(in.devices), nics: slices.Clone(in.nics), paths: maps.Clone(in.paths)}
}

func (in *injection) addNIC(nd *nicDevices) {
	if len(nd.devices) == 0 {
		return
	}
	in.nics = appendNIC(in.nics, nd)
	for _, d := range nd.devices {
		in.addDevice(d)
	}
}

func (in *injection) addDevice(d *nriapi.LinuxDevice) {
	if in.paths[d.Path] {
		return
	}
	in.paths[d.Path] = true
	in.devices = append(in.devices, d)
}

func appendNIC(list []*nicDevices, nd *nicDevices) []*nicDevices {
	for _, n := range list {
		if n == nd {
			return list
		}
	}
	return append(list, nd)
}
