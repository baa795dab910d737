package inventory

import (
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestTopologyFileKept: on a node whose distances come from its NCCL
// topology file (flat PCI, a Hyper-V VM), the snapshot keeps the file's
// distances when a NIC sits in a pod (the merge with the leases) and
// after a device read. Before, a held NIC gave a machine without the file:
// every distance fell back to NUMA only.
func TestTopologyFileKept(t *testing.T) {
	root := t.TempDir()
	spec, err := fakesys.Write(root, "azure-ndh100v5", fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	file, err := topology.ReadTopoFile("../../pkg/topology/testdata/ndv5-topo.xml")
	if err != nil {
		t.Fatal(err)
	}
	discover := func(root string) (*topology.Machine, error) {
		return topology.DiscoverWith(root, topology.Options{TopologyFile: file})
	}
	holders := map[string]string{"mlx5_ib0": "ns/a"}
	inv, err := New(root, discover, func() map[string]string { return holders })
	if err != nil {
		t.Fatal(err)
	}
	want := inv.Current().Machine.Report()
	must(t, fakesys.RemoveNetdev(root, netdevOf(t, spec, "mlx5_ib0")))
	held, err := inv.Rescan("mlx5_ib0's netdev in its pod")
	if err != nil {
		t.Fatal(err)
	}
	must(t, fakesys.SetPortState(root, "mlx5_ib3", 1, "DOWN"))
	read, published := inv.Update("link event", []string{"mlx5_ib3"})
	if !published {
		t.Fatal("mlx5_ib3 DOWN published nothing")
	}
	for _, s := range []*Snapshot{held, read} {
		got := s.Machine.Report()
		if s.InPod["mlx5_ib0"] != "ns/a" || got.TopologyFile != want.TopologyFile || !got.FlatPCI ||
			got.Matrix["2"]["mlx5_ib2"] != topology.PIX || got.Sources["2"]["mlx5_ib2"] != topology.SourceFile {
			t.Errorf("snapshot %d (%s): file %q, flat %v, GPU2–mlx5_ib2 %v from %q; want the file's PIX as at start",
				s.Version, s.Cause, got.TopologyFile, got.FlatPCI, got.Matrix["2"]["mlx5_ib2"], got.Sources["2"]["mlx5_ib2"])
		}
	}
}
