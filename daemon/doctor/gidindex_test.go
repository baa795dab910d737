package doctor

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestGIDDisagreement: doctor --pod says so when the pod's RoCE
// interfaces hold its addresses at different GID indices, naming each and
// what NCCL, UCX and Mooncake then do; nothing when they agree, for one
// interface, or for InfiniBand ports.
func TestGIDDisagreement(t *testing.T) {
	roce := func(name string, idx int) api.PodInterface {
		return api.PodInterface{Name: name, NIC: &api.NIC{RDMADevice: "mlx5_" + name[len(name)-1:], LinkLayer: "Ethernet"}, GIDIndex: intPtr(idx)}
	}
	ib := func(name string, idx int) api.PodInterface {
		i := roce(name, idx)
		i.NIC.LinkLayer = "InfiniBand"
		return i
	}
	tests := []struct {
		name   string
		ifaces []api.PodInterface
		want   []string // "" for no note
	}{
		{"two RoCE ports disagree", []api.PodInterface{roce("rail0", 3), roce("rail1", 4)},
			[]string{"rail0 3, rail1 4", "none of NCCL_IB_GID_INDEX, UCX_IB_GID_INDEX, MC_GID_INDEX", "NCCL picks", "UCX's default", "Mooncake"}},
		{"they agree", []api.PodInterface{roce("rail0", 3), roce("rail1", 3)}, nil},
		{"one interface", []api.PodInterface{roce("rail0", 3)}, nil},
		{"InfiniBand ports have no GID index to agree on", []api.PodInterface{ib("rail0", 0), ib("rail1", 1)}, nil},
		{"an interface without an index", []api.PodInterface{roce("rail0", 3), {Name: "rail1", NIC: &api.NIC{LinkLayer: "Ethernet"}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := gidDisagreement(tt.ifaces)
			if (got == "") != (tt.want == nil) {
				t.Fatalf("note %q, want one: %v", got, tt.want != nil)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("note %q does not say %q", got, w)
				}
			}
		})
	}
}
