package nri

import (
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// softRoCENode writes the softroce machine (rxe0, the node's stand-in
// port) with the rxe rail made for sandbox s1's rail0 as shared netns mode
// shows it in the host's sysfs: its GID table holds the pod's address at
// index 1 (RoCE v2), as kernel 7.3 lists it.
func softRoCENode(t *testing.T) (*topology.Machine, string) {
	t.Helper()
	return softRoCENodeOn(t, "softroce", topology.Options{})
}

// softRoCENodeOn is softRoCENode on another built-in machine, read with opt.
func softRoCENodeOn(t *testing.T, machine string, opt topology.Options) (*topology.Machine, string) {
	t.Helper()
	root := t.TempDir()
	podRxe := rdma.SoftRoCEName("s1", "rail0")
	host, _ := fakesys.Machine(machine)
	host.SoftRoCE = append(host.SoftRoCE, fakesys.SoftRoCE{RDMA: podRxe, Netdev: "rail0"})
	if _, err := fakesys.WriteHost(root, "softroce-pod", host, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := fakesys.WriteGIDs(root, podRxe, 1, []string{gidLinkLocal, gidV4Pod5}, []string{"RoCE v2", "RoCE v2"}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.DiscoverWith(root, opt)
	if err != nil {
		t.Fatal(err)
	}
	return m, podRxe
}

// TestSoftRoCEContainer: on a softRoCE node a leased pod's container gets
// the rxe the plugin made in the pod — its uverbs and rdma_cm, not the
// node's rxe0 the interface came from — and env naming it, with the GID
// index read from its own table and UCX's DGID check off; the same node
// without softRoCE gives rxe0 and no DGID variable.
func TestSoftRoCEContainer(t *testing.T) {
	m, podRxe := softRoCENode(t)
	pod, ok := podNIC(t, m.Root, podRxe)
	if !ok {
		t.Fatal("pod rxe unreadable")
	}
	node, _ := m.NICByName("rxe0")
	tests := []struct {
		name    string
		soft    bool
		devices []string
		env     map[string]string
	}{{
		name:    "softRoCE",
		soft:    true,
		devices: []string{dev(pod.Uverbs.Name, int(pod.Uverbs.Major), int(pod.Uverbs.Minor)), dev("rdma_cm", int(m.RdmaCM.Major), int(m.RdmaCM.Minor))},
		env: map[string]string{envNCCLHCA: "=" + podRxe, envUCXDevices: podRxe + ":1", envMCFilters: podRxe, envNCCLGIDIndex: "1",
			envUCXGIDIndex: "1", envMCGIDIndex: "1", envUCXDGIDCheck: "n", envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0"},
	}, {
		name:    "hardware node (softRoCE off)",
		devices: []string{dev(node.Uverbs.Name, int(node.Uverbs.Major), int(node.Uverbs.Minor)), dev("rdma_cm", int(m.RdmaCM.Major), int(m.RdmaCM.Minor))},
		env: map[string]string{envNCCLHCA: "=rxe0", envUCXDevices: "rxe0:1", envMCFilters: "rxe0",
			envNCCLAddrRange: "10.56.0.0/24", envNCCLSocketIf: "=eth0"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, sandbox := startPod(t, Options{Machine: fixed(m), SoftRoCE: tt.soft}, []lease{{mode: "macvlan", addr: "10.56.0.5/24", nics: []string{"rxe0"}}})
			adj, _, err := p.CreateContainer(t.Context(), sandbox, ctr("app"))
			if err != nil {
				t.Fatal(err)
			}
			got := summarize(adj)
			if !slices.Equal(got.Devices, tt.devices) {
				t.Errorf("devices %v, want %v", got.Devices, tt.devices)
			}
			if !reflect.DeepEqual(got.Env, tt.env) {
				t.Errorf("env %v\nwant %v", got.Env, tt.env)
			}
		})
	}
}

// TestSoftRoCEContainerOnNetdevNIC: on a softRoCE VM whose NICs have no
// RDMA device (placed by their netdevs), a pod leased eth1 gets its own
// rxe's uverbs and rdma_cm and the env naming it, nothing of eth1; a pod
// without a lease given a GPU gets nothing auto-injected (eth1, its GPU's
// NIC, has no device to give), and no NIC table entry warns of a missing
// uverbs device.
func TestSoftRoCEContainerOnNetdevNIC(t *testing.T) {
	m, podRxe := softRoCENodeOn(t, "softroce-vm", topology.Options{NetdevNICs: true})
	pod, ok := podNIC(t, m.Root, podRxe)
	if !ok {
		t.Fatal("pod rxe unreadable")
	}
	p, sandbox := startPod(t, Options{Machine: fixed(m), SoftRoCE: true}, []lease{{mode: "macvlan", addr: "10.56.0.5/24", nics: []string{"eth1"}}})
	adj, _, err := p.CreateContainer(t.Context(), sandbox, ctr("app"))
	if err != nil {
		t.Fatal(err)
	}
	got := summarize(adj)
	want := []string{dev(pod.Uverbs.Name, int(pod.Uverbs.Major), int(pod.Uverbs.Minor)), dev("rdma_cm", int(m.RdmaCM.Major), int(m.RdmaCM.Minor))}
	if !slices.Equal(got.Devices, want) {
		t.Errorf("devices %v, want %v", got.Devices, want)
	}
	if got.Env[envNCCLHCA] != "="+podRxe || got.Env[envUCXDevices] != podRxe+":1" || got.Env[envNCCLGIDIndex] != "1" {
		t.Errorf("env %v: want it to name %s, GID index 1", got.Env, podRxe)
	}
	if nd := buildNodeDevices(m, false, slog.New(slog.DiscardHandler)); len(nd.nics) != 0 {
		t.Errorf("node NIC devices %v: netdev-only NICs have none", nd.nics)
	}
	if a := buildGPUAffinity(m, nil); len(a.nics) != 0 {
		t.Errorf("auto-injection NICs %v: netdev-only NICs have nothing to inject", a.nics)
	}
}

// TestSoftRoCEDeviceLate: a pod whose rxe is not readable when it starts
// gets no device for it (logged), and its container created once the
// device is there gets it: a miss is not remembered.
func TestSoftRoCEDeviceLate(t *testing.T) {
	m, podRxe := softRoCENode(t)
	hidden := m.Root + "/sys/class/infiniband/" + podRxe
	if err := os.Rename(hidden, hidden+".away"); err != nil {
		t.Fatal(err)
	}
	p, sandbox := startPod(t, Options{Machine: fixed(m), SoftRoCE: true}, []lease{{mode: "macvlan", addr: "10.56.0.5/24", nics: []string{"rxe0"}}})
	adj, _, err := p.CreateContainer(t.Context(), sandbox, ctr("early"))
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(adj); len(got.Devices) != 0 || strings.Contains(got.String(), "rxe0") {
		t.Errorf("container before its pod's rxe exists: %v, want nothing (never the node's rxe0)", got)
	}
	if err := os.Rename(hidden+".away", hidden); err != nil {
		t.Fatal(err)
	}
	adj, _, err = p.CreateContainer(t.Context(), sandbox, ctr("late"))
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(adj); got.Env[envNCCLHCA] != "="+podRxe || len(got.Devices) != 2 {
		t.Errorf("container after its pod's rxe appeared: %v, want its uverbs, rdma_cm and NCCL_IB_HCA==%s", got, podRxe)
	}
}

func podNIC(t *testing.T, root, name string) (topology.NIC, bool) {
	t.Helper()
	sys, err := topology.OpenSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	nic, err := sys.PodSoftRoCE(name)
	return nic, err == nil
}
