package podreport

import (
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/pkg/api"
)

func TestAttachedNotes(t *testing.T) {
	rail := 1
	a := railAttach("rail0", "10.77.0.2/24")
	a.Interfaces[0].NIC.Rail = &rail
	a.Interfaces[0].Distances = []service.GPUDistance{{GPU: 0, Class: "PIX", Chose: true}, {GPU: 2, Class: "SYS"}}
	noGPUs := railAttach("rail0", "10.77.0.3/24")
	ipamOnly := railAttach("net1", "10.77.0.4/24")
	ipamOnly.Interfaces[0].NIC, ipamOnly.Mode = nil, api.ModeIPAM
	tests := []struct {
		name string
		a    service.Attached
		want string
	}{
		{name: "GPUs", a: a, want: "rail0: NIC mlx5_0 (netdev ens1f0, PCI 0000:17:00.0, rail 1), address 10.77.0.2/24 from pool rail, " +
			"mode macvlan, network rail; GPU distances: 0 PIX (chose it), 2 SYS"},
		{name: "no GPUs", a: noGPUs, want: "rail0: NIC mlx5_0 (netdev ens1f0, PCI 0000:17:00.0), address 10.77.0.3/24 from pool rail, " +
			"mode macvlan, network rail; no GPUs known: the selector alone chose the NIC"},
		{name: "address only", a: ipamOnly, want: "net1: no NIC (address only), address 10.77.0.4/24 from pool rail, mode ipam, network rail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			notes := attachedNotes(tt.a)
			if len(notes) != 1 || notes[0].Type != "Normal" || notes[0].Reason != ReasonAttached || notes[0].Message != tt.want {
				t.Fatalf("notes = %+v\nwant message %q", notes, tt.want)
			}
		})
	}
}

func TestRefusedNote(t *testing.T) {
	tests := []struct {
		name       string
		err        *api.Error
		wantReason string
		wantFix    string
	}{
		{name: "none free", err: &api.Error{Code: api.CodeNoNIC, Msg: "no RDMA NIC for this pod",
			Details: "pod ns/p (GPUs 0; mode move): no usable NIC for mode move: gpu 0: no usable NIC: mlx5_0 moved into pod ns/old"},
			wantReason: ReasonNoNIC, wantFix: "none free: wait for or delete the pods holding the NICs"},
		{name: "none close enough", err: &api.Error{Code: api.CodeNoNIC, Msg: "no RDMA NIC for this pod",
			Details: "pod ns/p (GPUs 0; mode move): distance bound: GPU 0: the closest free NIC mlx5_3 is SYS, beyond PHB"},
			wantReason: ReasonNoNIC, wantFix: "none close enough: free one of the closer NICs named above, or raise maxDistance"},
		{name: "selector", err: &api.Error{Code: api.CodeNoNIC, Msg: "no RDMA NIC for this pod",
			Details: `pod ns/p: nics: "mlx5_9" is not an RDMA device on this node (have mlx5_0)`},
			wantReason: ReasonNoNIC, wantFix: "the selector matches no NIC"},
		{name: "pool exhausted", err: &api.Error{Code: api.CodePoolExhausted, Msg: "pool exhausted", Details: "pool rail: no free address"},
			wantReason: ReasonPoolExhausted, wantFix: "give the pool a larger per-node block"},
		{name: "invalid config", err: &api.Error{Code: api.CodeInvalidConfig, Msg: `invalid field "pool"`, Details: `pool "nope" does not exist`},
			wantReason: ReasonInvalidConfig, wantFix: "fix: correct the field named above"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := refusedNote(service.Refused{Pod: service.PodRef{Namespace: "ns", Name: "p"}, Network: "rail", Err: tt.err})
			if n.Type != "Warning" || n.Reason != tt.wantReason || !strings.Contains(n.Message, tt.wantFix) ||
				!strings.HasPrefix(n.Message, "network rail: "+tt.err.Error()) {
				t.Fatalf("note = %+v; want reason %s with %q", n, tt.wantReason, tt.wantFix)
			}
		})
	}
}

func TestBoundedMessage(t *testing.T) {
	long := strings.Repeat("x", 3000)
	if got := bounded(long); len(got) != noteLimit || !strings.HasSuffix(got, "[...]") {
		t.Fatalf("bounded(3000 chars) = %d chars", len(got))
	}
	if got := bounded("short"); got != "short" {
		t.Fatalf("bounded(short) = %q", got)
	}
}
