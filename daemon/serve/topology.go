package serve

import (
	"log/slog"

	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/pkg/topology"
)

// discoverer is how the inventory reads the machine: sysfs, with the
// node's NCCL topology file when the config names one (read once here; a
// file that cannot be read or parsed stops raild with the reason), and
// with netdevNICs (a softRoCE node) the Ethernet NICs without an RDMA
// device too, by their netdevs.
func discoverer(path string, log *slog.Logger) (func(netdevNICs bool) inventory.Discoverer, error) {
	var file *topology.TopoFile
	if path != "" {
		var err error
		if file, err = topology.ReadTopoFile(path); err != nil {
			return nil, err
		}
		gpus, nics := file.Devices()
		log.Info("distances from the NCCL topology file", "file", path, "gpus", len(gpus), "nics", len(nics))
	}
	return func(netdevNICs bool) inventory.Discoverer {
		opt := topology.Options{TopologyFile: file, NetdevNICs: netdevNICs}
		return func(root string) (*topology.Machine, error) { return topology.DiscoverWith(root, opt) }
	}, nil
}
