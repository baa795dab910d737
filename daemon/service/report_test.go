package service

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// fakeReporter records what the service reports, one line per call.
type fakeReporter struct {
	mu    sync.Mutex
	calls []string
	last  []Attached
}

func (f *fakeReporter) Attached(a Attached) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var parts []string
	for _, i := range a.Interfaces {
		nic := "-"
		if i.NIC != nil {
			nic = i.NIC.RDMADevice
		}
		parts = append(parts, fmt.Sprintf("%s=%s@%s", i.Name, nic, i.Addresses[0].CIDR[:len("10.77.0.")]))
	}
	f.calls = append(f.calls, fmt.Sprintf("attached %s/%s %s chained=%v %s", a.Pod.Namespace, a.Pod.Name, a.Network, a.Chained, strings.Join(parts, ",")))
	f.last = append(f.last, a)
}

func (f *fakeReporter) Refused(r Refused) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("refused %s/%s %s code=%d", r.Pod.Namespace, r.Pod.Name, r.Network, r.Err.Code))
}

func (f *fakeReporter) Released(r Released) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for _, i := range r.Interfaces {
		names = append(names, i.Name+"@"+i.Address[:len("10.77.0.")])
	}
	f.calls = append(f.calls, fmt.Sprintf("released %s/%s %s %s", r.Pod.Namespace, r.Pod.Name, r.Network, strings.Join(names, ",")))
}

func TestReporterSeesAttachRefuseRelease(t *testing.T) {
	ctx := context.Background()
	release := func(sb string) func(*Service) error {
		return func(s *Service) error {
			return s.Release(ctx, api.AttachmentRequest{Sandbox: sb, CNIIfName: "eth0", Network: "net"})
		}
	}
	allocate := func(req api.AllocateRequest) func(*Service) error {
		return func(s *Service) error { _, err := s.Allocate(ctx, req); return err }
	}
	tests := []struct {
		name    string
		machine string
		pools   []ipam.PoolConfig
		steps   []func(*Service) error
		want    []string
	}{
		{name: "chained attach, repeated ADD, DEL, repeated DEL", machine: "h100x8-cx7x4", pools: onePool(),
			steps: []func(*Service) error{allocate(allocReq("a", "0,2")), allocate(allocReq("a", "0,2")), release("a"), release("a")},
			want: []string{"attached default/pod-a net chained=true rail0=mlx5_0@10.77.0.,rail1=mlx5_1@10.77.0.",
				"released default/pod-a net rail0@10.77.0.,rail1@10.77.0."}},
		{name: "pass-through pod: nothing", machine: "h100x8-cx7x4", pools: onePool(),
			steps: []func(*Service) error{allocate(func() api.AllocateRequest {
				r := allocReq("p", "")
				r.Annotations = nil
				return r
			}()), release("p")}},
		{name: "no NIC free", machine: "lab-1x1", pools: onePool(),
			steps: []func(*Service) error{allocate(allocReq("old", "0")), allocate(allocReq("new", "0"))},
			want:  []string{"attached default/pod-old net chained=true rail0=mlx5_0@10.77.0.", "refused default/pod-new net code=100"}},
		{name: "pool exhausted", machine: "h100x8-cx7x4", pools: []ipam.PoolConfig{{Name: "rail", Subnet: "10.77.0.0/30"}},
			steps: []func(*Service) error{allocate(allocReq("a", "0")), allocate(allocReq("b", "2")), allocate(allocReq("c", "4"))},
			want: []string{"attached default/pod-a net chained=true rail0=mlx5_0@10.77.0.",
				"attached default/pod-b net chained=true rail0=mlx5_1@10.77.0.", "refused default/pod-c net code=101"}},
		{name: "bad annotation", machine: "h100x8-cx7x4", pools: onePool(),
			steps: []func(*Service) error{allocate(func() api.AllocateRequest {
				r := allocReq("x", "0")
				r.Annotations[api.AnnotationPool] = "nope"
				return r
			}())},
			want: []string{"refused default/pod-x net code=7"}},
		{name: "no pod name: nothing", machine: "lab-1x1", pools: onePool(),
			steps: []func(*Service) error{allocate(func() api.AllocateRequest {
				r := allocReq("y", "0")
				r.PodName = ""
				return r
			}()), release("y")}},
		{name: "rail-ipam lease", machine: "h100x8-cx7x4", pools: onePool(),
			steps: []func(*Service) error{allocate(api.AllocateRequest{Sandbox: "i", CNIIfName: "net1", Network: "ipam-net",
				Mode: api.ModeIPAM, PodNamespace: "ns", PodName: "p"})},
			want: []string{"attached ns/p ipam-net chained=false net1=-@10.77.0."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &fakeReporter{}
			svc, _ := newService(t, tt.machine, tt.pools, nil, func(o *Options) { o.Reporter = rep })
			for _, step := range tt.steps {
				_ = step(svc) // refusals are the point of some steps
			}
			if strings.Join(rep.calls, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("reported:\n%s\nwant:\n%s", strings.Join(rep.calls, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// Each interface carries its NIC's class to every GPU of the pod, and
// which GPUs chose it.
func TestReportedDistances(t *testing.T) {
	rep := &fakeReporter{}
	svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil, func(o *Options) { o.Reporter = rep })
	if _, err := svc.Allocate(context.Background(), allocReq("d", "0,1,2")); err != nil {
		t.Fatal(err)
	}
	if len(rep.last) != 1 {
		t.Fatalf("reports = %v", rep.calls)
	}
	for _, iface := range rep.last[0].Interfaces {
		if len(iface.Distances) != 3 {
			t.Fatalf("%s distances = %+v, want one per GPU", iface.Name, iface.Distances)
		}
		for _, d := range iface.Distances {
			if d.Chose != holds(iface.GPUs, d.GPU) || d.Class == "" {
				t.Errorf("%s GPU %d: %+v (choosers %v)", iface.Name, d.GPU, d, iface.GPUs)
			}
			if d.Chose && d.Class != iface.Distance {
				t.Errorf("%s: chooser GPU %d class %s, plan says %s", iface.Name, d.GPU, d.Class, iface.Distance)
			}
		}
	}
	if got := rep.last[0].Interfaces[0].Distances; got[0].Class != "PIX" || got[2].Class == "PIX" {
		t.Errorf("rail0 (mlx5_0) distances %+v: want PIX to GPU 0 and farther to GPU 2", got)
	}
}
