package nri

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestDualPortInjection: on a node with dual-port HCAs each port is a NIC
// of its own: a pod holding port 2 gets the device's uverbs (per device),
// port 2's umad/issm (per port) and "<dev>:2" in NCCL_IB_HCA and
// UCX_NET_DEVICES; a single-port NIC keeps its bare name in NCCL_IB_HCA.
func TestDualPortInjection(t *testing.T) {
	m, spec := discoverMachine(t, "dualport-2s", fakesys.Options{})
	dev := func(d fakesys.DevSpec) string {
		return fmt.Sprintf("/dev/infiniband/%s c %d:%d 0666", d.Name, d.Major, d.Minor)
	}
	mlx40, _ := spec.NIC("mlx4_0")
	mlx50, _ := spec.NIC("mlx5_0")
	port2 := mlx40.MorePorts[0]
	rdmaCM := dev(spec.RdmaCM)
	tests := []struct {
		name    string
		nics    []string
		umad    bool
		devices []string
		hca     string
		ucx     string
	}{
		{"port 2", []string{"mlx4_0:2"}, false, []string{dev(mlx40.Uverbs), rdmaCM}, "=mlx4_0:2", "mlx4_0:2"},
		{"port 2 with umad", []string{"mlx4_0:2"}, true,
			[]string{dev(mlx40.Uverbs), dev(port2.Umad), dev(*port2.Issm), rdmaCM}, "=mlx4_0:2", "mlx4_0:2"},
		{"port 1 of a dual-port device", []string{"mlx4_0"}, true,
			[]string{dev(mlx40.Uverbs), dev(mlx40.Umad), dev(*mlx40.Issm), rdmaCM}, "=mlx4_0:1", "mlx4_0:1"},
		{"both ports: one uverbs", []string{"mlx4_0", "mlx4_0:2"}, true,
			[]string{dev(mlx40.Uverbs), dev(mlx40.Umad), dev(*mlx40.Issm), dev(port2.Umad), dev(*port2.Issm), rdmaCM},
			"=mlx4_0:1,mlx4_0:2", "mlx4_0:1,mlx4_0:2"},
		{"single-port NIC keeps its name", []string{"mlx5_0"}, false, []string{dev(mlx50.Uverbs), rdmaCM}, "=mlx5_0", "mlx5_0:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newFakeState()
			st.add("s1", api.ModeMove, "10.56.0.5/24", tc.nics...)
			p, err := newPlugin(Config{UMAD: tc.umad}, m, st, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			adj, _, err := p.CreateContainer(t.Context(), pod("s1", "default", nil), ctr("app"))
			if err != nil {
				t.Fatal(err)
			}
			got := summarize(adj)
			if !slices.Equal(got.Devices, tc.devices) {
				t.Errorf("devices %q, want %q", got.Devices, tc.devices)
			}
			if got.Env[envNCCLHCA] != tc.hca || got.Env[envUCXDevices] != tc.ucx {
				t.Errorf("%s=%q %s=%q, want %q and %q", envNCCLHCA, got.Env[envNCCLHCA], envUCXDevices, got.Env[envUCXDevices], tc.hca, tc.ucx)
			}
		})
	}
}

// TestDualPortGIDIndex: a macvlan pod on port 2 of a RoCE HCA gets the GID
// index of port 2's table, not port 1's.
func TestDualPortGIDIndex(t *testing.T) {
	m, spec := discoverMachine(t, "dualport-2s", fakesys.Options{})
	const podGID = "0000:0000:0000:0000:0000:ffff:0a38:0005" // ::ffff:10.56.0.5
	tables := map[int][]string{
		1: {"fe80:0000:0000:0000:0a00:27ff:fe00:0001", podGID},
		2: {"fe80:0000:0000:0000:0a00:27ff:fe00:0002", "fe80:0000:0000:0000:0a00:27ff:fe00:0003", podGID},
	}
	for port, gids := range tables {
		if err := fakesys.WriteGIDs(spec.Root, "mlx4_1", port, gids, nil); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		nic  string
		want string
	}{{"mlx4_1", "1"}, {"mlx4_1:2", "2"}}
	for _, tc := range tests {
		t.Run(tc.nic, func(t *testing.T) {
			st := newFakeState()
			st.add("s1", api.ModeMacvlan, "10.56.0.5/24", tc.nic)
			p, err := newPlugin(Config{}, m, st, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			adj, _, err := p.CreateContainer(t.Context(), pod("s1", "default", nil), ctr("app"))
			if err != nil {
				t.Fatal(err)
			}
			if got := summarize(adj).Env[envNCCLGIDIndex]; got != tc.want {
				t.Errorf("%s = %q, want %s", envNCCLGIDIndex, got, tc.want)
			}
		})
	}
}

// TestDualPortAnnotationOwnership: while another pod holds port 2 in move
// mode, an annotation may not take the device's uverbs (it serves both
// ports) nor port 2's umad; port 1's umad and other devices stay free.
func TestDualPortAnnotationOwnership(t *testing.T) {
	m, _ := discoverMachine(t, "dualport-2s", fakesys.Options{})
	tests := []struct {
		value   string
		refused string // "" when allowed
	}{
		{"uverbs0", `"uverbs0" belongs to mlx4_0:2`},
		{"umad1", `"umad1" belongs to mlx4_0:2`},
		{"umad0", ""},
		{"uverbs2,rdma_cm", ""},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			st := newFakeState()
			st.add("other", api.ModeMove, "10.56.0.6/24", "mlx4_0:2")
			p, err := newPlugin(Config{UMAD: true, AnnotationNamespaces: []string{"hpc"}}, m, st, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			call := p.begin(hookCreateContainer, pod("s1", "hpc", nil), ctr("app"))
			_, err = p.allowedDevices(&call, tc.value)
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Errorf("err = %v, want one containing %s", err, tc.refused)
			}
		})
	}
}
