package nri

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// FuzzDevicesAnnotation: whatever a rail.dev/devices value holds, the hook
// neither fails nor panics, and what it injects is only RDMA character
// devices of this node, with their own numbers: umad/issm only with
// nri.umad, nothing of the NIC another pod holds in move mode, and NCCL_IB_HCA
// naming only NICs whose uverbs it injected.
//
//	go test -run '^$' -fuzz '^FuzzDevicesAnnotation$' -fuzztime 60s ./daemon/nri
func FuzzDevicesAnnotation(f *testing.F) {
	for _, seed := range []string{
		"uverbs0,rdma_cm", "uverbs3, umad2 ,issm0", "/dev/sda", "../../dev/mem", "uverbs0/../../mem",
		"/dev/infiniband/uverbs0", "sda", "uverbs1", "umad1", "issm1", "uverbs9999", "uverbs00", "uverbs-1",
		"uverbs0\x00", "rdma_cm2", " , ", "", "uverbs\u0660", strings.Repeat("uverbs2,", 130),
	} {
		f.Add(seed, false, false)
		f.Add(seed, true, true)
	}
	root := f.TempDir()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	st := newFakeState()
	st.add("other", api.ModeMove, "10.56.0.7/24", "mlx5_1")
	plugins := map[bool]*Plugin{}
	for _, umad := range []bool{false, true} {
		p, err := newPlugin(Config{AnnotationNamespaces: []string{"*"}, UMAD: umad}, testMachine(root), st, nil, log)
		if err != nil {
			f.Fatal(err)
		}
		plugins[umad] = p
	}
	f.Fuzz(func(t *testing.T, value string, umad, perContainer bool) {
		key := api.AnnotationDevices
		if perContainer {
			key += ".app"
		}
		adj, updates, err := plugins[umad].CreateContainer(context.Background(),
			pod("s1", "hpc", map[string]string{key: value}), ctr("app"))
		if err != nil || updates != nil {
			t.Fatalf("CreateContainer(%q): err %v, updates %v", value, err, updates)
		}
		allowed := grantable(testMachine(root), umad, "mlx5_1")
		got := summarize(adj)
		for _, d := range got.Devices {
			if !allowed[d] {
				t.Fatalf("annotation %q injected %s, not a grantable RDMA device of this node", value, d)
			}
		}
		for _, nic := range strings.Split(strings.TrimPrefix(got.Env[envNCCLHCA], "="), ",") {
			if nic != "" && !injectedUverbs(got.Devices, nic) {
				t.Fatalf("annotation %q set %s to %s without its uverbs device", value, envNCCLHCA, nic)
			}
		}
	})
}

// grantable lists, as summarize prints them, the devices an annotation may
// bring from a machine, read from the topology itself.
func grantable(m *topology.Machine, umad bool, movedAway string) map[string]bool {
	out := map[string]bool{dev(m.RdmaCM.Name, int(m.RdmaCM.Major), int(m.RdmaCM.Minor)): true}
	add := func(cd *topology.CharDev) {
		if cd != nil && cd.Path == "/dev/infiniband/"+cd.Name {
			out[dev(cd.Name, int(cd.Major), int(cd.Minor))] = true
		}
	}
	for _, nic := range m.NICs {
		if nic.Name == movedAway {
			continue
		}
		add(nic.Uverbs)
		for _, p := range nic.Ports {
			if umad {
				add(p.Umad)
				add(p.Issm)
			}
		}
	}
	return out
}

// injectedUverbs tells whether the devices hold the uverbs node of the
// fixture's NIC mlx5_N, uverbsN.
func injectedUverbs(devices []string, nic string) bool {
	n, ok := strings.CutPrefix(nic, "mlx5_")
	if !ok {
		return false
	}
	prefix := fmt.Sprintf("/dev/infiniband/uverbs%s ", n)
	for _, d := range devices {
		if strings.HasPrefix(d, prefix) {
			return true
		}
	}
	return false
}
