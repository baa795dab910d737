package serve

import (
	"log/slog"

	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/pkg/topology"
)

// discoverer is how the inventory reads the machine: sysfs, with the
// node's NCCL topology file when the config names one (read once here; a
// file that cannot be read or parsed stops raild with the reason).
func discoverer(path string, log *slog.Logger) (inventory.Discoverer, error) {
	if path == "" {
		return topology.Discover, nil
	}
	file, err := topology.ReadTopoFile(path)
	if err != nil {
		return nil, err
	}
	gpus, nics := file.Devices()
	log.Info("distances from the NCCL topology file", "file", path, "gpus", len(gpus), "nics", len(nics))
	return func(root string) (*topology.Machine, error) {
		return topology.DiscoverWith(root, topology.Options{TopologyFile: file})
	}, nil
}
