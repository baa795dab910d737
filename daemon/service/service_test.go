package service

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

type fakePods map[string][]string // "ns/name" -> device ids

func (f fakePods) PodGPUs(_ context.Context, ns, name string, _ []string) (podinfo.Devices, error) {
	return podinfo.Devices{IDs: f[ns+"/"+name]}, nil
}

// podGPUs is a kubelet stand-in that answers for whole pods, all the
// service asks.
type podGPUs interface {
	PodGPUs(ctx context.Context, namespace, name string, resources []string) (podinfo.Devices, error)
}

// podKubelet makes a podGPUs a podinfo.Kubelet; the service never asks
// per container.
type podKubelet struct{ podGPUs }

func (podKubelet) ContainerGPUs(context.Context, string, string, []string) (map[string]podinfo.Devices, error) {
	return nil, errors.New("the service asked the kubelet per container")
}

// fixed is a machine that never changes, as Options.Machine reads it.
func fixed(m *topology.Machine) func() *topology.Machine {
	return func() *topology.Machine { return m }
}

// gpuSource is the GPU source raild builds, over pods (nil: no kubelet).
func gpuSource(m *topology.Machine, pods podGPUs) *podinfo.GPUSource {
	src := &podinfo.GPUSource{Resources: []string{"nvidia.com/gpu"}, Machine: fixed(m)}
	if pods != nil {
		src.Kubelet = podKubelet{pods}
	}
	return src
}

// newService builds a service on a built-in machine with the given pools.
func newService(t testing.TB, machine string, pools []ipam.PoolConfig, pods podGPUs, tweaks ...func(*Options)) (*Service, *fakesys.Spec) {
	t.Helper()
	root := t.TempDir()
	spec, err := fakesys.Write(root, machine, fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	alloc := openAlloc(t, pools)
	rails := map[string]int{}
	next := 0
	for _, g := range m.GPUs {
		nic := m.Affinity()[g.Index]
		if _, ok := rails[nic]; !ok && nic != "" {
			rails[nic] = next
			next++
		}
	}
	opt := Options{Machine: fixed(m), Rails: rails, Alloc: alloc, GPUs: gpuSource(m, pods)}
	for _, tweak := range tweaks {
		tweak(&opt)
	}
	svc, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return svc, spec
}

// openAlloc opens a fresh lease store over pools, closed at cleanup.
func openAlloc(t testing.TB, pools []ipam.PoolConfig) *ipam.Allocator {
	t.Helper()
	p, err := ipam.NewPools(pools, "node1")
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := ipam.Open(filepath.Join(t.TempDir(), "leases.db"), p, ipam.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alloc.Close() })
	return alloc
}

func onePool() []ipam.PoolConfig {
	return []ipam.PoolConfig{{Name: "rail", Subnet: "10.77.0.0/24"}}
}

func allocReq(sandbox string, gpus string) api.AllocateRequest {
	return api.AllocateRequest{Sandbox: sandbox, CNIIfName: "eth0", Network: "net", Mode: api.ModeMove, Chained: true,
		PodNamespace: "default", PodName: "pod-" + sandbox, Annotations: map[string]string{api.AnnotationGPUs: gpus}}
}

func nicsOf(plan *api.Plan) []string {
	var out []string
	for _, i := range plan.Interfaces {
		if i.NIC != nil {
			out = append(out, i.Name+"="+i.NIC.RDMADevice)
		}
	}
	return out
}

func TestAllocatePlacement(t *testing.T) {
	tests := []struct {
		name    string
		req     api.AllocateRequest
		want    string // interfaces as name=nic, comma-separated
		tables  bool   // policy tables expected
		wantErr string
	}{
		{name: "prefill gpus 0,1 share mlx5_0", req: allocReq("a", "0,1"), want: "rail0=mlx5_0"},
		{name: "decode gpus 4,5 get mlx5_2", req: allocReq("b", "4,5"), want: "rail0=mlx5_2"},
		{name: "gpus 0,2 get two rails", req: allocReq("c", "0,2"), want: "rail0=mlx5_0,rail1=mlx5_1", tables: true},
		{name: "by uuid", req: allocReq("d", "GPU-placeholder"), wantErr: "GPU-placeholder"},
		{name: "multus alone names net1, net1-1", req: func() api.AllocateRequest {
			r := allocReq("e", "")
			r.Chained, r.CNIIfName = false, "net1"
			r.CNIArgs = &api.CNIArgs{GPUs: api.List{"4", "6"}}
			return r
		}(), want: "net1=mlx5_2,net1-1=mlx5_3", tables: true},
		{name: "selector alone", req: func() api.AllocateRequest {
			r := allocReq("f", "")
			r.Annotations = map[string]string{api.AnnotationAttach: "true"}
			r.Selector.NICs = []string{"mlx5_3"}
			return r
		}(), want: "rail0=mlx5_3"},
		{name: "macvlan refuses InfiniBand NICs", req: func() api.AllocateRequest {
			r := allocReq("g", "0")
			r.Mode = api.ModeMacvlan
			return r
		}(), wantErr: "Ethernet"},
		{name: "unknown nic", req: func() api.AllocateRequest {
			r := allocReq("h", "0")
			r.Selector.NICs = []string{"mlx5_9"}
			return r
		}(), wantErr: "mlx5_9"},
		{name: "unknown gpu", req: allocReq("i", "12"), wantErr: "12"},
		{name: "an empty entry in rail.dev/gpus", req: allocReq("j", "0,,1"), wantErr: "entry 2 is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil)
			plan, err := svc.Allocate(context.Background(), tt.req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error mentioning %q", err, tt.wantErr)
				}
				if len(svc.Leases()) != 0 {
					t.Fatalf("a failed allocation left leases: %+v", svc.Leases())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(nicsOf(plan), ","); got != tt.want {
				t.Fatalf("interfaces = %s, want %s", got, tt.want)
			}
			for _, iface := range plan.Interfaces {
				if (iface.Table != 0) != tt.tables {
					t.Errorf("%s table = %d, want tables %v", iface.Name, iface.Table, tt.tables)
				}
				if len(iface.Addresses) != 1 || !strings.HasPrefix(iface.Addresses[0].CIDR, "10.77.0.") {
					t.Errorf("%s addresses = %+v", iface.Name, iface.Addresses)
				}
			}
			again, err := svc.Allocate(context.Background(), tt.req)
			if err != nil || fmt.Sprint(nicsOf(again)) != fmt.Sprint(nicsOf(plan)) ||
				again.Interfaces[0].Addresses[0] != plan.Interfaces[0].Addresses[0] {
				t.Fatalf("repeated ADD gave %+v, %v; want the same plan", again, err)
			}
		})
	}
}

func TestMoveExclusivity(t *testing.T) {
	svc, _ := newService(t, "lab-1x1", onePool(), nil)
	ctx := context.Background()
	if _, err := svc.Allocate(ctx, allocReq("old", "0")); err != nil {
		t.Fatal(err)
	}
	_, err := svc.Allocate(ctx, allocReq("new", "0"))
	if !api.IsCode(err, api.CodeNoNIC) || !strings.Contains(err.Error(), "moved into pod default/pod-old") {
		t.Fatalf("second pod on a moved NIC: got %v, want CodeNoNIC naming the holder", err)
	}
	// The old sandbox goes; the new one gets the NIC; a late release of the
	// old sandbox must not free the new one's lease.
	if err := svc.Release(ctx, api.AttachmentRequest{Sandbox: "old", CNIIfName: "eth0", Network: "net"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Allocate(ctx, allocReq("new", "0")); err != nil {
		t.Fatal(err)
	}
	if err := svc.Release(ctx, api.AttachmentRequest{Sandbox: "old", CNIIfName: "eth0", Network: "net"}); err != nil {
		t.Fatal(err)
	}
	leases := svc.Leases()
	if len(leases) != 1 || leases[0].Sandbox != "new" {
		t.Fatalf("leases after a late release = %+v", leases)
	}
	if got := svc.SandboxLeases("new"); len(got) != 1 || got[0].NICs[0] != "mlx5_0" {
		t.Fatalf("SandboxLeases(new) = %+v", got)
	}
}

func TestConcurrentMoveNeverSharesANIC(t *testing.T) {
	svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil)
	var wg sync.WaitGroup
	results := make(chan string, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			plan, err := svc.Allocate(context.Background(), allocReq(fmt.Sprintf("s%d", i), "0"))
			if err == nil {
				results <- plan.Interfaces[0].NIC.RDMADevice
			} else if !api.IsCode(err, api.CodeNoNIC) {
				t.Errorf("allocation %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	close(results)
	seen := map[string]bool{}
	for nic := range results {
		if seen[nic] {
			t.Fatalf("NIC %s moved into two pods", nic)
		}
		seen[nic] = true
	}
	if len(seen) != 4 {
		t.Fatalf("%d NICs handed out, want all 4", len(seen))
	}
}

func TestPoolChoice(t *testing.T) {
	rail0, rail1 := 0, 1
	pools := []ipam.PoolConfig{
		{Name: "prefill", Subnet: "10.1.0.0/24"},
		{Name: "decode", Subnet: "10.2.0.0/24"},
		{Name: "r0", Subnet: "10.3.0.0/24", Rail: &rail0},
		{Name: "r1", Subnet: "10.4.0.0/24", Rail: &rail1},
	}
	tests := []struct {
		name    string
		mutate  func(*api.AllocateRequest)
		want    string // pool per interface
		wantErr string
	}{
		{name: "bound to rails", mutate: func(r *api.AllocateRequest) {}, want: "r0,r1"},
		{name: "netconf default", mutate: func(r *api.AllocateRequest) { r.Pool = "decode" }, want: "decode,decode"},
		{name: "annotation beats netconf", mutate: func(r *api.AllocateRequest) {
			r.Pool = "decode"
			r.Annotations[api.AnnotationPool] = "prefill"
		}, want: "prefill,prefill"},
		{name: "cni-args beat annotation", mutate: func(r *api.AllocateRequest) {
			r.Annotations[api.AnnotationPool] = "prefill"
			r.CNIArgs = &api.CNIArgs{Pool: "decode"}
		}, want: "decode,decode"},
		{name: "pool bound to rail 1 narrows the NICs", mutate: func(r *api.AllocateRequest) { r.Pool = "r1" }, want: "r1"},
		{name: "unknown pool", mutate: func(r *api.AllocateRequest) { r.Annotations[api.AnnotationPool] = "nope" }, wantErr: `pool "nope" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := newService(t, "h100x8-cx7x4", pools, nil)
			req := allocReq("p", "0,2")
			tt.mutate(&req)
			plan, err := svc.Allocate(context.Background(), req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !api.IsCode(err, api.CodeInvalidConfig) {
					t.Fatalf("got %v, want code 7 mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, i := range plan.Interfaces {
				got = append(got, i.Pool)
			}
			if strings.Join(got, ",") != tt.want {
				t.Fatalf("pools = %v, want %s", got, tt.want)
			}
		})
	}
}

func TestGPUsFromPodResources(t *testing.T) {
	root := t.TempDir()
	spec, err := fakesys.Write(root, "h100x8-cx7x4", fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pods := fakePods{"default/decode": {spec.GPUs[4].UUID, spec.GPUs[5].UUID}}
	svc, _ := newService(t, "h100x8-cx7x4", onePool(), pods)
	req := allocReq("x", "")
	req.Annotations, req.PodName = nil, "decode"
	plan, err := svc.Allocate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := nicsOf(plan); len(got) != 1 || got[0] != "rail0=mlx5_2" || fmt.Sprint(plan.Interfaces[0].GPUs) != "[4 5]" {
		t.Fatalf("plan = %v gpus %v; want rail0=mlx5_2 for GPUs 4,5", got, plan.Interfaces[0].GPUs)
	}
}

func TestGCAndIPAMMode(t *testing.T) {
	svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil)
	ctx := context.Background()
	for _, sb := range []string{"keep", "drop"} {
		req := api.AllocateRequest{Sandbox: sb, CNIIfName: "net1", Network: "ipam-net", Mode: api.ModeIPAM}
		plan, err := svc.Allocate(ctx, req)
		if err != nil || len(plan.Interfaces) != 1 || plan.Interfaces[0].NIC != nil {
			t.Fatalf("ipam allocate: %+v %v", plan, err)
		}
	}
	res, err := svc.GC(ctx, api.GCRequest{Network: "ipam-net", Valid: []api.Attachment{{Sandbox: "keep", CNIIfName: "net1"}}})
	if err != nil || len(res.Released) != 1 || res.Released[0].Sandbox != "drop" {
		t.Fatalf("GC = %+v, %v", res, err)
	}
	if leases := svc.Leases(); len(leases) != 1 || leases[0].Sandbox != "keep" {
		t.Fatalf("leases after GC = %+v", leases)
	}
}

func TestValidate(t *testing.T) {
	ok := api.AllocateRequest{Sandbox: "abc", CNIIfName: "eth0", Network: "n", Mode: api.ModeMove}
	tests := []struct {
		name  string
		req   func(api.AllocateRequest) api.AllocateRequest
		field string
	}{
		{"empty sandbox", func(r api.AllocateRequest) api.AllocateRequest { r.Sandbox = ""; return r }, `"sandbox"`},
		{"long ifname", func(r api.AllocateRequest) api.AllocateRequest { r.CNIIfName = "abcdefghijklmnop"; return r }, `"ifName"`},
		{"bad mode", func(r api.AllocateRequest) api.AllocateRequest { r.Mode = "bridge"; return r }, `"mode"`},
		{"no network", func(r api.AllocateRequest) api.AllocateRequest { r.Network = ""; return r }, `"network"`},
		{"bad link layer", func(r api.AllocateRequest) api.AllocateRequest { r.Selector.LinkLayer = "x"; return r }, `"selector.linkLayer"`},
		{"path as prefix", func(r api.AllocateRequest) api.AllocateRequest { r.IfPrefix = "../../"; return r }, `"ifPrefix"`},
		{"prefix with a space", func(r api.AllocateRequest) api.AllocateRequest { r.IfPrefix = "ra il"; return r }, `"ifPrefix"`},
		{"path as pool", func(r api.AllocateRequest) api.AllocateRequest { r.Pool = "../p"; return r }, `"pool"`},
	}
	if err := ValidateAllocate(ok); err != nil {
		t.Fatalf("valid request refused: %v", err)
	}
	for _, tt := range tests {
		err := ValidateAllocate(tt.req(ok))
		if !api.IsCode(err, api.CodeInvalidConfig) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: got %v, want code 7 naming %s", tt.name, err, tt.field)
		}
	}
}
