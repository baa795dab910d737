package inventory

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/linkfilter"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestEventFilter: which link events concern the inventory, and what each
// asks: none for a pod's veth, a bridge or a macvlan (links sysfs shows
// without a `device`) or for anything unknown going away; the NIC's RDMA
// device for an event of a NIC's netdev, by name (a pod holding it
// included) or, renamed since, by the ifindex an earlier event had; the
// RDMA device below a new link with a `device` the snapshot does not
// know; a look again later at a new NIC-like link with no RDMA device
// yet; the whole node when events were lost. An event of a NIC's netdev
// whose attributes are as its last event left them asks for nothing; an
// upper device of it in the same netns (a macvlan, a VLAN: the NIC is then
// the node's own) asks for the NIC.
func TestEventFilter(t *testing.T) {
	tests := []struct {
		name    string
		holders map[string]string
		setup   func(t *testing.T, root string, spec *fakesys.Spec) // before the snapshot
		change  func(t *testing.T, root string, spec *fakesys.Spec) // after it
		rescan  bool                                                // rescan after the change
		before  []LinkEvent                                         // classified first, not checked
		event   func(spec *fakesys.Spec) LinkEvent
		want    string // "ignored", "full", "devices [..] netdevs [..]"
	}{
		{name: "a pod's host veth appears", event: func(*fakesys.Spec) LinkEvent { return LinkEvent{Name: "veth1a2b3c", Index: 40} },
			want: "ignored"},
		{name: "a bridge port changes", setup: virtualNetdev("cni0"),
			event: func(*fakesys.Spec) LinkEvent { return LinkEvent{Name: "cni0", Index: 41} }, want: "ignored"},
		{name: "someone's macvlan on a NIC appears", setup: virtualNetdev("mv0"),
			event: func(*fakesys.Spec) LinkEvent { return LinkEvent{Name: "mv0", Index: 42} }, want: "ignored"},
		{name: "an unknown link goes away", event: func(*fakesys.Spec) LinkEvent { return LinkEvent{Name: "veth9", Index: 43, Gone: true} },
			want: "ignored"},
		{name: "a NIC's netdev changes state", event: func(s *fakesys.Spec) LinkEvent { return LinkEvent{Name: nd(s, "mlx5_1"), Index: 5} },
			want: "devices [] netdevs [] ports [mlx5_1] away []"},
		{name: "a NIC's netdev leaves for a pod", event: func(s *fakesys.Spec) LinkEvent {
			return LinkEvent{Name: nd(s, "mlx5_2"), Index: 6, Gone: true, Moved: true}
		}, want: "devices [] netdevs [] ports [] away [mlx5_2]"},
		{name: "a NIC's netdev deleted", event: func(s *fakesys.Spec) LinkEvent {
			return LinkEvent{Name: nd(s, "mlx5_2"), Index: 6, Gone: true}
		}, want: "devices [mlx5_2] netdevs []"},
		{name: "a held NIC's netdev comes back from its pod", holders: map[string]string{"mlx5_0": "ns/a"}, rescan: true,
			change: func(t *testing.T, root string, s *fakesys.Spec) { must(t, fakesys.RemoveNetdev(root, nd(s, "mlx5_0"))) },
			event:  func(s *fakesys.Spec) LinkEvent { return LinkEvent{Name: nd(s, "mlx5_0"), Index: 9} },
			want:   "devices [] netdevs [] ports [mlx5_0] away []"},
		{name: "a NIC's netdev as its last event left it (an upper device added)",
			before: []LinkEvent{{Name: "ibp30s0", Index: 5, State: linkfilter.State{Flags: 0x1003, OperState: 6}}},
			event: func(*fakesys.Spec) LinkEvent {
				return LinkEvent{Name: "ibp30s0", Index: 5, State: linkfilter.State{Flags: 0x1003, OperState: 6}}
			}, want: "ignored"},
		{name: "a NIC's netdev going down after an event",
			before: []LinkEvent{{Name: "ibp30s0", Index: 5, State: linkfilter.State{Flags: 0x1003, OperState: 6}}},
			event: func(*fakesys.Spec) LinkEvent {
				return LinkEvent{Name: "ibp30s0", Index: 5, State: linkfilter.State{Flags: 0x1002, OperState: 2}}
			}, want: "devices [] netdevs [] ports [mlx5_1] away []"},
		{name: "a NIC's netdev back under its ifindex after leaving",
			before: []LinkEvent{{Name: "ibp30s0", Index: 5}, {Name: "ibp30s0", Index: 5, Gone: true}},
			event:  func(*fakesys.Spec) LinkEvent { return LinkEvent{Name: "ibp30s0", Index: 5} }, want: "devices [] netdevs [] ports [mlx5_1] away []"},
		{name: "someone's macvlan in the host netns on a NIC's netdev", before: []LinkEvent{{Name: "ibp30s0", Index: 5}},
			setup: virtualNetdev("mvhost0"),
			event: func(*fakesys.Spec) LinkEvent { return LinkEvent{Name: "mvhost0", Index: 51, Lower: 5} },
			want:  "devices [mlx5_1] netdevs []"},
		{name: "that macvlan deleted", before: []LinkEvent{{Name: "ibp30s0", Index: 5}},
			event: func(*fakesys.Spec) LinkEvent { return LinkEvent{Name: "mvhost0", Index: 51, Lower: 5, Gone: true} },
			want:  "devices [mlx5_1] netdevs []"},
		{name: "a NIC's netdev renamed", before: []LinkEvent{{Name: "ibp30s0", Index: 5}},
			event: func(*fakesys.Spec) LinkEvent { return LinkEvent{Name: "renamed0", Index: 5} }, want: "devices [] netdevs [] ports [mlx5_1] away []"},
		{name: "a renamed NIC's netdev goes away", before: []LinkEvent{{Name: "ibp30s0", Index: 5}, {Name: "renamed0", Index: 5}},
			event: func(*fakesys.Spec) LinkEvent { return LinkEvent{Name: "renamed0", Index: 5, Gone: true} }, want: "devices [mlx5_1] netdevs []"},
		{name: "an ifindex reused after its NIC's netdev left", before: []LinkEvent{{Name: "ibp30s0", Index: 5}, {Name: "ibp30s0", Index: 5, Gone: true}},
			event: func(*fakesys.Spec) LinkEvent { return LinkEvent{Name: "veth77", Index: 5} }, want: "ignored"},
		{name: "a new link that is an RDMA port's netdev", setup: aside("mlx5_3"),
			change: func(t *testing.T, root string, _ *fakesys.Spec) { back(t, root, "mlx5_3") },
			event:  func(s *fakesys.Spec) LinkEvent { return LinkEvent{Name: nd(s, "mlx5_3"), Index: 12} },
			want:   "devices [mlx5_3] netdevs []"},
		{name: "a new NIC-like link with no RDMA device yet", setup: aside("mlx5_3"),
			change: func(t *testing.T, root string, s *fakesys.Spec) {
				must(t, os.RemoveAll(filepath.Join(root, "sys/class/net", nd(s, "mlx5_3"), "device/infiniband")))
			},
			event: func(s *fakesys.Spec) LinkEvent { return LinkEvent{Name: nd(s, "mlx5_3"), Index: 12} },
			want:  "devices [] netdevs [ibp160s0]"},
		{name: "events lost", event: func(*fakesys.Spec) LinkEvent { return LinkEvent{Lost: true} }, want: "full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, spec := fakeNode(t, fakesys.Options{})
			if tt.setup != nil {
				tt.setup(t, root, spec)
			}
			inv, err := New(root, nil, func() map[string]string { return tt.holders })
			if err != nil {
				t.Fatal(err)
			}
			if tt.change != nil {
				tt.change(t, root, spec)
			}
			if tt.rescan {
				if _, err := inv.Rescan("test"); err != nil {
					t.Fatal(err)
				}
			}
			f := newEventFilter(inv.sys)
			for _, ev := range tt.before {
				f.classify(inv.Current(), ev)
			}
			if got := describe(f.classify(inv.Current(), tt.event(spec))); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func describe(c concern) string {
	switch {
	case c.full:
		return "full"
	case c.none():
		return "ignored"
	}
	out := fmt.Sprintf("devices %v netdevs %v", c.readDevices(), c.netdevs)
	if ports, away := c.movedDevices(); len(ports)+len(away) > 0 {
		out += fmt.Sprintf(" ports %v away %v", ports, away)
	}
	return out
}

// movedDevices are the RDMA devices whose NICs' ports a concern reads
// (their netdevs came back or changed), and those whose netdevs it marks
// away.
func (c *concern) movedDevices() (ports, away []string) {
	for _, m := range c.moves {
		if m.away {
			away = append(away, m.device)
		} else {
			ports = append(ports, m.device)
		}
	}
	slices.Sort(ports)
	slices.Sort(away)
	return slices.Compact(ports), slices.Compact(away)
}

// TestBurstOfUpperDevices: an upper device that arrives on a NIC's netdev
// and leaves again within one burst (another plugin's macvlan made in the
// host netns, then moved into its pod) asks for no read; one that stays,
// or one that was there before the burst and leaves, asks for the NIC.
func TestBurstOfUpperDevices(t *testing.T) {
	came := func(i int) LinkEvent {
		return LinkEvent{Name: fmt.Sprintf("mv%d", i), Index: 50 + i, Lower: 5, New: true}
	}
	went := func(i int) LinkEvent { ev := came(i); ev.Gone, ev.New = true, false; return ev }
	changed := func(i int) LinkEvent { ev := came(i); ev.New = false; return ev }
	tests := []struct {
		name   string
		burst  []LinkEvent
		want   []string
		settle bool
	}{
		{"came and went", []LinkEvent{came(1), went(1)}, nil, true},
		{"two came and went, interleaved", []LinkEvent{came(1), came(2), went(1), went(2)}, nil, true},
		{"came and stayed", []LinkEvent{came(1)}, []string{"mlx5_1"}, false},
		{"one came and went, another came", []LinkEvent{came(1), went(1), came(2)}, []string{"mlx5_1"}, false},
		{"was there before and went", []LinkEvent{went(1)}, []string{"mlx5_1"}, false},
		{"was there before, changed and went", []LinkEvent{changed(1), went(1)}, []string{"mlx5_1"}, false},
		{"was there before and changed", []LinkEvent{changed(1)}, []string{"mlx5_1"}, false},
		{"went, then came back", []LinkEvent{went(1), came(1)}, []string{"mlx5_1"}, false},
		{"came and went, and the NIC changed", []LinkEvent{came(1), {Name: "ibp30s0", Index: 5, State: linkfilter.State{MTU: 4000}}, went(1)},
			[]string{"mlx5_1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := fakeNode(t, fakesys.Options{})
			inv, err := New(root, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			f := newEventFilter(inv.sys)
			f.classify(inv.Current(), LinkEvent{Name: "ibp30s0", Index: 5}) // the NIC's ifindex, learned
			var c concern
			for _, ev := range tt.burst {
				c.add(f.classify(inv.Current(), ev))
			}
			ports, _ := c.movedDevices()
			got := slices.Concat(c.readDevices(), ports)
			slices.Sort(got)
			if got = slices.Compact(got); !slices.Equal(got, tt.want) || c.settled() != tt.settle {
				t.Errorf("burst asks to read %v (settled %v), want %v (settled %v)", got, c.settled(), tt.want, tt.settle)
			}
		})
	}
}

func nd(spec *fakesys.Spec, nic string) string {
	n, _ := spec.NIC(nic)
	return n.Netdev
}

// virtualNetdev writes a netdev as sysfs shows a veth, bridge or macvlan:
// below /sys/devices/virtual/net, with no `device` link.
func virtualNetdev(name string) func(t *testing.T, root string, _ *fakesys.Spec) {
	return func(t *testing.T, root string, _ *fakesys.Spec) {
		dir := filepath.Join(root, "sys/devices/virtual/net", name)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "operstate"), []byte("up\n"), 0o644))
		must(t, os.Symlink("../../devices/virtual/net/"+name, filepath.Join(root, "sys/class/net", name)))
	}
}

// aside takes an RDMA device's class entry out of the machine (kept
// beside it), so the snapshot does not know it; back returns it.
func aside(device string) func(t *testing.T, root string, _ *fakesys.Spec) {
	return func(t *testing.T, root string, _ *fakesys.Spec) {
		moveAside(t, root, "sys/class/infiniband/"+device)
	}
}

func back(t *testing.T, root, device string) {
	(&movedAside{root: root, paths: []string{"sys/class/infiniband/" + device}}).restore(t)
}

// TestUpdateReadsOnlyItsDevice: a device read shows that device's files
// as they are and leaves every other NIC as the last read saw it, even
// where its files changed; reading a device that changed nothing
// publishes nothing; a device the snapshot did not know is picked up in
// its place.
func TestUpdateReadsOnlyItsDevice(t *testing.T) {
	root, _ := fakeNode(t, fakesys.Options{})
	moveAside(t, root, "sys/class/infiniband/mlx5_3")
	inv, err := New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := inv.Current()
	if s, published := inv.Update("nothing changed", []string{"mlx5_0"}); published || s != first {
		t.Fatalf("a read that changed nothing published version %d", s.Version)
	}
	must(t, fakesys.SetPortState(root, "mlx5_0", 1, "DOWN"))
	must(t, fakesys.SetPortState(root, "mlx5_1", 1, "DOWN"))
	back(t, root, "mlx5_3")
	s, published := inv.Update("link event", []string{"mlx5_1", "mlx5_3"})
	if !published || s.Version != first.Version+1 {
		t.Fatalf("published %v, version %d", published, s.Version)
	}
	var got []string
	for _, nic := range s.Machine.NICs {
		got = append(got, nic.Name+" "+nic.State)
	}
	want := "mlx5_0 ACTIVE, mlx5_1 DOWN, mlx5_2 ACTIVE, mlx5_3 ACTIVE"
	if strings.Join(got, ", ") != want {
		t.Errorf("NICs %v, want %s", got, want)
	}
	if !slices.Equal(changeNames(s.Changes), []string{"mlx5_1", "mlx5_3"}) {
		t.Errorf("changes %v, want mlx5_1 and mlx5_3", s.Changes)
	}
	if stats := inv.Stats(); stats.FullRescans != 1 || stats.DeviceReads != 3 || stats.Published != 2 {
		t.Errorf("stats %+v: want 1 full rescan, 3 device reads, 2 snapshots", stats)
	}
}

func changeNames(changes []StateChange) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.NIC)
	}
	return out
}

// TestUpdateHolders: a device read publishes what the leases change in
// the view, and only that: a pod taking a NIC that stays on the host
// (macvlan mode) changes nothing readers see, so no snapshot; a pod
// taking a NIC whose netdev already left the host puts it in the pod.
func TestUpdateHolders(t *testing.T) {
	root, spec := fakeNode(t, fakesys.Options{})
	var holders map[string]string
	inv, err := New(root, nil, func() map[string]string { return holders })
	if err != nil {
		t.Fatal(err)
	}
	first := inv.Current()
	holders = map[string]string{"mlx5_0": "ns/macvlan-pod"}
	if s, published := inv.Update("link event", []string{"mlx5_0"}); published {
		t.Errorf("a lease on a NIC still on the host published version %d", s.Version)
	}
	if s, published := inv.Update("link event", []string{"mlx5_0"}); published || s != first {
		t.Errorf("the same holders again published version %d", s.Version)
	}
	must(t, fakesys.RemoveNetdev(root, nd(spec, "mlx5_1")))
	holders = map[string]string{"mlx5_0": "ns/macvlan-pod", "mlx5_1": "ns/move-pod"}
	s, published := inv.Update("link event", []string{"mlx5_1"})
	if !published || s.InPod["mlx5_1"] != "ns/move-pod" || nicOf(t, s, "mlx5_1").Netdev != nd(spec, "mlx5_1") {
		t.Errorf("published %v, in pods %v, mlx5_1 %+v: want it in its pod under its host name", published, s.InPod, nicOf(t, s, "mlx5_1"))
	}
}
