package attached

import (
	"reflect"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/readiness"
	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/pkg/api"
)

// recorder keeps what reached it.
type recorder struct {
	attached []service.Attached
	refused  []service.Refused
	released []service.Released
}

func (r *recorder) Attached(a service.Attached) { r.attached = append(r.attached, a) }
func (r *recorder) Refused(f service.Refused)   { r.refused = append(r.refused, f) }
func (r *recorder) Released(d service.Released) { r.released = append(r.released, d) }

func attachment(sandbox, network string, names ...string) service.Attached {
	a := service.Attached{Sandbox: sandbox, Network: network}
	for _, n := range names {
		a.Interfaces = append(a.Interfaces, service.AttachedInterface{PlanInterface: api.PlanInterface{Name: n, Reason: "closest"}})
	}
	return a
}

// TestFanout: every reader gets every event as the service sent it; a
// sandbox's second attachment reaches the API side with its own
// interfaces only (when Placements forwarded its merged record, the
// Events of the first attachment's interfaces went out again).
func TestFanout(t *testing.T) {
	placed := NewPlacements(nil)
	api1, api2 := &recorder{}, &recorder{}
	f := Fanout{placed, api1, api2}
	first, second := attachment("s1", "rail", "rail0"), attachment("s1", "ipoib", "net1")
	f.Attached(first)
	f.Attached(second)
	f.Refused(service.Refused{Sandbox: "s2"})
	f.Released(service.Released{Sandbox: "s1", Interfaces: []service.ReleasedInterface{{Name: "rail0"}}})
	for i, r := range []*recorder{api1, api2} {
		if !reflect.DeepEqual(r.attached, []service.Attached{first, second}) || len(r.refused) != 1 || len(r.released) != 1 {
			t.Errorf("reader %d got %+v", i, r)
		}
	}
	if got := placed.Of("s1", "net1"); got.Network != "ipoib" || got.Reason != "closest" {
		t.Errorf("Of(s1, net1) = %+v", got)
	}
	if got := placed.Of("s1", "rail0"); !reflect.DeepEqual(got, readiness.Placement{}) {
		t.Errorf("released rail0 still placed: %+v", got)
	}
}

func TestPlacements(t *testing.T) {
	now := time.Now()
	p := NewPlacements(func() time.Time { return now })
	a := attachment("s1", "rail", "rail0", "rail1")
	a.Interfaces[0].NIC = &api.NIC{RDMADevice: "mlx5_0"}
	a.Interfaces[0].Distances = []service.GPUDistance{{GPU: 1, Class: "PIX", Chose: true}, {GPU: 0, Class: "NODE"}}
	a.Interfaces[1].Distances = []service.GPUDistance{{GPU: 0, Class: "PIX", Chose: true}}
	p.Attached(a)
	want := readiness.Placement{Network: "rail", NIC: &api.NIC{RDMADevice: "mlx5_0"}, Reason: "closest",
		Distances: []api.GPUDistance{{GPU: 1, Class: "PIX", Chose: true}, {GPU: 0, Class: "NODE"}}}
	if got := p.Of("s1", "rail0"); !reflect.DeepEqual(got, want) {
		t.Errorf("Of = %+v, want %+v", got, want)
	}
	if got := p.GPUs("s1"); !reflect.DeepEqual(got, []int{1, 0}) {
		t.Errorf("GPUs = %v, want [1 0]", got)
	}
	p.Released(service.Released{Sandbox: "s1", Interfaces: []service.ReleasedInterface{{Name: "rail0"}, {Name: "rail1"}}})
	if got := p.GPUs("s1"); got != nil {
		t.Errorf("GPUs after release = %v", got)
	}
	// a sandbox whose leases went without a DEL (GC) is forgotten after
	// the grace, not before
	p.Attached(attachment("gone", "rail", "rail0"))
	p.ForgetUnleased(nil)
	if p.Of("gone", "rail0").Reason == "" {
		t.Fatal("a fresh placement without a lease was forgotten")
	}
	now = now.Add(2 * Grace)
	p.ForgetUnleased(map[string]bool{"gone": true})
	if p.Of("gone", "rail0").Reason == "" {
		t.Fatal("a leased sandbox's placement was forgotten")
	}
	p.ForgetUnleased(nil)
	if p.Of("gone", "rail0").Reason != "" {
		t.Fatal("a placement without a lease kept past the grace")
	}
}
