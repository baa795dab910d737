package topology_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestDiscoverDeviceMatchesDiscover: reading one RDMA device gives exactly
// the NICs and the device's problems that reading the whole machine gives
// for it, on every built-in machine and on machines damaged the ways a
// live node is (uverbs unregistered, umad gone, a port down, the netdev
// moved away, the device gone, its class link dangling).
func TestDiscoverDeviceMatchesDiscover(t *testing.T) {
	damages := []struct {
		name   string
		damage func(t *testing.T, root string, spec *fakesys.Spec, nic fakesys.NICSpec)
	}{
		{"as written", nil},
		{"uverbs unregistered", func(t *testing.T, root string, _ *fakesys.Spec, nic fakesys.NICSpec) {
			if nic.Uverbs.Name != "" {
				mustDo(t, os.Remove(filepath.Join(root, "sys/class/infiniband_verbs", nic.Uverbs.Name)))
			}
		}},
		{"umad gone", func(t *testing.T, root string, _ *fakesys.Spec, nic fakesys.NICSpec) {
			if nic.Umad.Name != "" {
				mustDo(t, os.Remove(filepath.Join(root, "sys/class/infiniband_mad", nic.Umad.Name)))
			}
		}},
		{"port down", func(t *testing.T, root string, _ *fakesys.Spec, nic fakesys.NICSpec) {
			mustDo(t, fakesys.SetPortState(root, nic.Name, 1, "DOWN"))
		}},
		{"netdev moved away", func(t *testing.T, root string, _ *fakesys.Spec, nic fakesys.NICSpec) {
			if nic.Netdev != "" && !nic.Virtual {
				mustDo(t, fakesys.RemoveNetdev(root, nic.Netdev))
			}
		}},
		{"device gone", func(t *testing.T, root string, _ *fakesys.Spec, nic fakesys.NICSpec) {
			mustDo(t, os.Remove(filepath.Join(root, "sys/class/infiniband", nic.Name)))
		}},
		{"class link dangling", func(t *testing.T, root string, _ *fakesys.Spec, nic fakesys.NICSpec) {
			link := filepath.Join(root, "sys/class/infiniband", nic.Name)
			mustDo(t, os.Remove(link))
			mustDo(t, os.Symlink("../../devices/nowhere/"+nic.Name, link))
		}},
	}
	for _, machine := range fakesys.Names() {
		for _, dm := range damages {
			t.Run(machine+"/"+dm.name, func(t *testing.T) {
				root, spec := writeMachine(t, machine, fakesys.Options{})
				devices := deviceNames(spec)
				if dm.damage != nil {
					for _, name := range devices {
						nic, _ := spec.NIC(name)
						dm.damage(t, root, spec, nic)
					}
				}
				whole := discover(t, root)
				sys, err := topology.OpenSysfs(root)
				if err != nil {
					t.Fatal(err)
				}
				for _, device := range devices {
					gotNICs, gotProblems := sys.DiscoverDevice(device)
					var wantNICs []topology.NIC
					for _, nic := range whole.NICs {
						if nic.Device == device {
							wantNICs = append(wantNICs, nic)
						}
					}
					var wantProblems []topology.Problem
					for _, p := range whole.Problems {
						if p.Device == device {
							wantProblems = append(wantProblems, p)
						}
					}
					if !reflect.DeepEqual(gotNICs, wantNICs) {
						t.Errorf("%s: DiscoverDevice NICs\n got  %+v\n want %+v", device, gotNICs, wantNICs)
					}
					if !reflect.DeepEqual(gotProblems, wantProblems) {
						t.Errorf("%s: DiscoverDevice problems\n got  %v\n want %v", device, gotProblems, wantProblems)
					}
				}
			})
		}
	}
}

// deviceNames are the machine's RDMA devices (a dual-port device once).
func deviceNames(spec *fakesys.Spec) []string {
	var out []string
	for _, nic := range spec.NICs {
		out = append(out, nic.Name)
	}
	return out
}

// TestNetdevRDMADevices: a netdev with a `device` link is a NIC's and
// names the RDMA devices registered below that device; a virtual netdev
// (a software RDMA device's parent on no PCI function), one that is not
// there, or a name that is no single path element is none.
func TestNetdevRDMADevices(t *testing.T) {
	root, spec := writeMachine(t, "gpu8-nic8", fakesys.Options{})
	sys, err := topology.OpenSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	nic0, _ := spec.NIC("mlx5_0")
	tests := []struct {
		netdev  string
		devices []string
		nic     bool
	}{
		{nic0.Netdev, []string{"mlx5_0"}, true},
		{"veth1234", nil, false},
		{"", nil, false},
		{"..", nil, false},
		{"../../class/net/" + nic0.Netdev, nil, false},
	}
	for _, s := range spec.NICs {
		if s.Virtual && s.Netdev != "" {
			tests = append(tests, struct {
				netdev  string
				devices []string
				nic     bool
			}{s.Netdev, nil, false})
		}
	}
	for _, tt := range tests {
		devices, nic := sys.NetdevRDMADevices(tt.netdev)
		if nic != tt.nic || !slices.Equal(devices, tt.devices) {
			t.Errorf("NetdevRDMADevices(%q) = %v, %v; want %v, %v", tt.netdev, devices, nic, tt.devices, tt.nic)
		}
	}
	// A device with no RDMA device registered yet (a VF's netdev before
	// mlx5_ib binds): a NIC, with nothing to read yet.
	mustDo(t, os.RemoveAll(filepath.Join(root, "sys/class/net", nic0.Netdev, "device/infiniband")))
	if devices, nic := sys.NetdevRDMADevices(nic0.Netdev); !nic || len(devices) != 0 {
		t.Errorf("without infiniband/: %v, %v; want a NIC with no device", devices, nic)
	}
}

// TestDeviceNetdevs: the netdevs DeviceNetdevs lists are exactly those
// NetdevRDMADevices calls NICs', sorted; a netdev taken into a pod is
// gone from the list.
func TestDeviceNetdevs(t *testing.T) {
	root, spec := writeMachine(t, "gpu8-nic8", fakesys.Options{})
	sys, err := topology.OpenSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	all, err := os.ReadDir(filepath.Join(root, "sys/class/net"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range all {
		if _, nic := sys.NetdevRDMADevices(e.Name()); nic {
			want = append(want, e.Name())
		}
	}
	got := sys.DeviceNetdevs()
	if len(got) == 0 || !slices.Equal(got, want) || !slices.IsSorted(got) {
		t.Fatalf("DeviceNetdevs() = %v, want %v (sorted, not empty)", got, want)
	}
	nic0, _ := spec.NIC("mlx5_0")
	mustDo(t, fakesys.RemoveNetdev(root, nic0.Netdev))
	if got := sys.DeviceNetdevs(); slices.Contains(got, nic0.Netdev) || len(got) != len(want)-1 {
		t.Errorf("after %s left: %v, want it gone and the rest kept", nic0.Netdev, got)
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWithDevice: a device taken out of a machine and put back with what
// DiscoverDevice reads gives the machine Discover gives: the same NICs in
// the same order, the same problems and the same selection.
func TestWithDevice(t *testing.T) {
	for _, machine := range fakesys.Names() {
		t.Run(machine, func(t *testing.T) {
			root, spec := writeMachine(t, machine, fakesys.Options{})
			whole := discover(t, root)
			sys, err := topology.OpenSysfs(root)
			if err != nil {
				t.Fatal(err)
			}
			for _, device := range deviceNames(spec) {
				without := whole.WithDevice(device, nil, nil)
				if got := without.DeviceNICs(device); len(got) != 0 || len(without.NICs) != len(whole.NICs)-len(whole.DeviceNICs(device)) {
					t.Fatalf("%s: still listed after removal: %v", device, got)
				}
				nics, problems := sys.DiscoverDevice(device)
				back := without.WithDevice(device, nics, problems)
				if !reflect.DeepEqual(back.NICs, whole.NICs) {
					t.Errorf("%s put back: NICs in another order or changed:\n got  %v\n want %v", device, names(back.NICs), names(whole.NICs))
				}
				if !sameProblems(back.Problems, whole.Problems) {
					t.Errorf("%s put back: problems %v, want %v", device, back.Problems, whole.Problems)
				}
				if !reflect.DeepEqual(back.Report(), whole.Report()) {
					t.Errorf("%s put back: the report differs", device)
				}
			}
		})
	}
}

func names(nics []topology.NIC) []string {
	out := make([]string, len(nics))
	for i, n := range nics {
		out[i] = n.Name
	}
	return out
}

func sameProblems(a, b []topology.Problem) bool {
	key := func(p topology.Problem) string { return p.Device + "\x00" + p.Reason }
	ka, kb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ka[i] = key(a[i])
	}
	for i := range b {
		kb[i] = key(b[i])
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}
