package deviceplugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// liveNode is a fake machine under a running inventory whose snapshots
// reach the plugin as in raild (watchNode: Published -> MachineChanged).
type liveNode struct {
	root string
	spec *fakesys.Spec
}

// startLiveNode writes the machine, starts the plugin on its inventory and
// runs the inventory's watch on events, feeding each snapshot to the
// plugin.
func startLiveNode(t *testing.T, cfg Config, events inventory.LinkSource) *liveNode {
	t.Helper()
	n := &liveNode{root: t.TempDir()}
	spec, err := fakesys.Write(n.root, "h100x8-cx7x4", fakesys.Options{Netdevs: map[string]string{"mlx5_0": standInNetdev()}})
	if err != nil {
		t.Fatal(err)
	}
	n.spec = spec
	inv, err := inventory.New(n.root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := runLivePlugin(t, Options{Config: cfg, Machine: inv.Machine})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inv.Run(ctx, inventory.Watch{Events: events, Published: func(*inventory.Snapshot) { p.MachineChanged() }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return n
}

// standInNetdev names mlx5_0's netdev in the fake machine, as the veth
// standing in for it is named: the inventory reads a NIC again on events
// of its netdev only.
func standInNetdev() string { return fmt.Sprintf("rusdp%da", os.Getpid()%100000) }

// sent is a LinkSource of the link events a test sends itself.
type sent chan inventory.LinkEvent

func (s sent) Run(ctx context.Context, handle func(inventory.LinkEvent)) {
	for ctx.Err() == nil {
		select {
		case ev := <-s:
			handle(ev)
		case <-ctx.Done():
		}
	}
}

// sentEvents are link events a test sends itself, as netlink would.
func sentEvents(t *testing.T) (inventory.LinkSource, func(t *testing.T)) {
	events := make(sent)
	return events, func(t *testing.T) {
		t.Helper()
		select {
		case events <- inventory.LinkEvent{Name: standInNetdev()}:
		case <-time.After(20 * time.Second): // a hang guard
			t.Fatal("the inventory does not take link events")
		}
	}
}

// unplug takes a NIC and its uverbs node out of sysfs (kept aside).
func (n *liveNode) unplug(t *testing.T, nic, uverbs string) {
	t.Helper()
	for from, to := range map[string]string{
		"sys/class/infiniband/" + nic:          "aside/infiniband/" + nic,
		"sys/class/infiniband_verbs/" + uverbs: "aside/infiniband_verbs/" + uverbs,
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(n.root, to)), 0o755))
		must(t, os.Rename(filepath.Join(n.root, from), filepath.Join(n.root, to)))
	}
}

// replug puts the NIC back as a driver reload does: its uverbs node under
// a new name with new numbers.
func (n *liveNode) replug(t *testing.T, nic, oldUverbs, newUverbs, numbers string) {
	t.Helper()
	must(t, os.Rename(filepath.Join(n.root, "aside/infiniband", nic), filepath.Join(n.root, "sys/class/infiniband", nic)))
	aside := filepath.Join(n.root, "aside/infiniband_verbs", oldUverbs)
	target, err := os.Readlink(aside)
	must(t, err)
	link := filepath.Join(n.root, "sys/class/infiniband_verbs", newUverbs)
	must(t, os.Symlink(target, link))
	must(t, os.Remove(aside))
	must(t, os.WriteFile(filepath.Join(link, "dev"), []byte(numbers+"\n"), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// nextList reads ListAndWatch until a list satisfies ok.
func nextList(t *testing.T, stream pluginapi.DevicePlugin_ListAndWatchClient, what string, ok func([]*pluginapi.Device) bool) {
	t.Helper()
	for {
		list, err := stream.Recv()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok(list.Devices) {
			return
		}
	}
}

func all(health string, n int) func([]*pluginapi.Device) bool {
	return func(ds []*pluginapi.Device) bool {
		return len(ds) == n && !slices.ContainsFunc(ds, func(d *pluginapi.Device) bool { return d.Health != health })
	}
}

func allocatePaths(t *testing.T, c pluginapi.DevicePluginClient, id string) []string {
	t.Helper()
	resp, err := c.Allocate(t.Context(), &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{id}}}})
	if err != nil {
		t.Fatalf("Allocate %s: %v", id, err)
	}
	var paths []string
	for _, d := range resp.ContainerResponses[0].Devices {
		paths = append(paths, d.HostPath)
	}
	return paths
}

// TestFollowsTheLiveInventory: a running plugin whose machine's files
// change under it, each change followed by a link event to the
// inventory's watch as in raild (sent by the test, or real netlink events
// of a veth stand-in when root), and nothing polled (the poll interval is
// an hour): a port DOWN makes its rail Unhealthy, UP Healthy again; a
// removed NIC's rail lists no device and the node-wide resource stops
// handing out its node; re-added with a new uverbs node, it is back, with
// the new node in Allocate.
func TestFollowsTheLiveInventory(t *testing.T) {
	tests := []struct {
		name   string
		events func(t *testing.T) (inventory.LinkSource, func(t *testing.T))
	}{
		{"link events sent", sentEvents},
		{"netlink link events of a veth", netlinkEvents},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, kick := tt.events(t)
			followInventory(t, events, kick)
		})
	}
}

func followInventory(t *testing.T, events inventory.LinkSource, linkEvent func(t *testing.T)) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a hang guard
	defer cancel()
	dir := t.TempDir()
	startKubelet(t, dir)
	node := startLiveNode(t, Config{Dir: dir, Count: 2, PerRail: true, Rails: []string{"mlx5_0", "mlx5_1"}, PollInterval: "1h"}, events)
	nic, ok := node.spec.NIC("mlx5_0")
	if !ok || nic.Uverbs.Name == "" {
		t.Fatal("the fake machine lacks mlx5_0's uverbs node")
	}
	oldNode, newNode := "/dev/infiniband/"+nic.Uverbs.Name, "/dev/infiniband/uverbs9"
	rail0, node0 := dialWhenUp(t, dir, "rail.dev-rail0.sock"), dialWhenUp(t, dir, "rail.dev-rdma.sock")
	stream, err := rail0.ListAndWatch(ctx, &pluginapi.Empty{})
	must(t, err)
	nextList(t, stream, "the first list", all(pluginapi.Healthy, 2))

	steps := []struct {
		name     string
		change   func(t *testing.T)
		list     func([]*pluginapi.Device) bool
		rail0    []string // rail0's Allocate host paths; nil: not asked
		nodeWide string   // a path the node-wide resource must (+) or must not (-) hand out
	}{
		{"port DOWN", func(t *testing.T) { must(t, fakesys.SetPortState(node.root, "mlx5_0", 1, "DOWN")) },
			all(pluginapi.Unhealthy, 2), []string{oldNode, "/dev/infiniband/rdma_cm"}, "+" + oldNode},
		{"port UP", func(t *testing.T) { must(t, fakesys.SetPortState(node.root, "mlx5_0", 1, "ACTIVE")) },
			all(pluginapi.Healthy, 2), nil, "+" + oldNode},
		{"NIC removed", func(t *testing.T) { node.unplug(t, "mlx5_0", nic.Uverbs.Name) },
			all(pluginapi.Unhealthy, 0), nil, "-" + oldNode},
		{"NIC re-added with a new uverbs node", func(t *testing.T) { node.replug(t, "mlx5_0", nic.Uverbs.Name, "uverbs9", "231:201") },
			all(pluginapi.Healthy, 2), []string{newNode, "/dev/infiniband/rdma_cm"}, "+" + newNode},
	}
	for _, step := range steps {
		step.change(t)
		linkEvent(t)
		nextList(t, stream, step.name, step.list)
		if step.rail0 != nil {
			if got := allocatePaths(t, rail0, "rail0-0"); !slices.Equal(got, step.rail0) {
				t.Errorf("%s: rail0 Allocate = %v, want %v", step.name, got, step.rail0)
			}
		}
		got := allocatePaths(t, node0, "rdma-0")
		if want := step.nodeWide[1:]; slices.Contains(got, want) != (step.nodeWide[0] == '+') {
			t.Errorf("%s: node-wide Allocate = %v, want %s", step.name, got, step.nodeWide)
		}
	}
}
