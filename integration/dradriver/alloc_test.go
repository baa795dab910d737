package dradriver_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/railcni/rail/daemon/draplugin"
	"github.com/railcni/rail/integration/dradriver"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

const allocNode = "gpu-node"

// one is the allocation mode the API server defaults a request to.
const one = resourcev1.DeviceAllocationModeExactCount

// The chart's DeviceClasses (manifests/helm/rail/templates/deviceclasses.yaml;
// integration/k8s TestChartDRA checks the chart renders these expressions).
var classes = []*resourcev1.DeviceClass{
	class("rail.dev-exclusive", `device.driver == "rail.dev" && !device.attributes["rail.dev"].shared`),
	class("rail.dev-shared", `device.driver == "rail.dev" && device.attributes["rail.dev"].shared`),
	class("gpu.nvidia.com", `device.driver == "gpu.nvidia.com"`),
}

func class(name, expr string) *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}}}}
}

type lister []*resourcev1.DeviceClass

func (l lister) List() ([]*resourcev1.DeviceClass, error) { return l, nil }
func (l lister) Get(name string) (*resourcev1.DeviceClass, error) {
	for _, c := range l {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no DeviceClass %s", name)
}

// scheduler is the kube-scheduler's own allocator (structured, with the
// features v1.36 turns on by default) over the node's slices, keeping
// what it allocated as the scheduler's state does.
type scheduler struct {
	t      *testing.T
	slices []*resourcev1.ResourceSlice
	state  structured.AllocatedState
}

func newScheduler(t *testing.T, slices ...*resourcev1.ResourceSlice) *scheduler {
	return &scheduler{t: t, slices: slices, state: structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](), AggregatedCapacity: structured.NewConsumedCapacityCollection()}}
}

// allocate returns the claim's allocation (nil: it cannot be allocated on the node).
func (s *scheduler) allocate(claim *resourcev1.ResourceClaim) *resourcev1.AllocationResult {
	s.t.Helper()
	ctx := context.Background()
	a, err := structured.NewAllocator(ctx, structured.Features{ConsumableCapacity: true, DeviceTaints: true, PrioritizedList: true},
		s.state, lister(classes), s.slices, cel.NewCache(10, cel.Features{EnableConsumableCapacity: true}))
	if err != nil {
		s.t.Fatal(err)
	}
	results, err := a.Allocate(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: allocNode}}, []*resourcev1.ResourceClaim{claim})
	if err != nil {
		s.t.Fatal(err)
	}
	if len(results) == 0 {
		return nil
	}
	for _, r := range results[0].Devices.Results {
		id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
		if r.ShareID == nil {
			s.state.AllocatedDevices.Insert(id)
			continue
		}
		s.state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
		s.state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
	}
	return &results[0]
}

// railSlice is the slice raild's driver publishes for the machine.
func railSlice(t *testing.T, m *topology.Machine, cfg draplugin.Config, view draplugin.NodeView) *resourcev1.ResourceSlice {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	view.Machine = m
	cat := draplugin.Build(withDefaults(cfg), view, false, false)
	node := allocNode
	return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: allocNode + "-rail"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: "rail.dev", NodeName: &node, Pool: resourcev1.ResourcePool{Name: allocNode, Generation: 1, ResourceSliceCount: 1},
		Devices: cat.Devices}}
}

func withDefaults(c draplugin.Config) draplugin.Config {
	if c.DriverName == "" {
		c.DriverName = draplugin.DefaultDriverName
	}
	if c.SharedSlots == 0 {
		c.SharedSlots = draplugin.DefaultSharedSlots
	}
	if c.DownAs == "" {
		c.DownAs = draplugin.DownTaint
	}
	return c
}

func fakeMachine(t *testing.T, name string) *topology.Machine {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	if _, err := fakesys.Write(root, name, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// gpuAndNIC is a claim of GPU <gpu> and an exclusive Rail NIC sharing the
// attribute align with it.
func gpuAndNIC(name string, gpu int, align string) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID("uid-" + name)},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{
				{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com", AllocationMode: one, Count: 1, Selectors: []resourcev1.DeviceSelector{
					{CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf(`device.attributes["gpu.nvidia.com"].index == %d`, gpu)}}}}},
				{Name: "nic", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "rail.dev-exclusive", AllocationMode: one, Count: 1}},
			},
			Constraints: []resourcev1.DeviceConstraint{{Requests: []string{"gpu", "nic"}, MatchAttribute: ptrQ(align)}},
		}}}
}

func ptrQ(s string) *resourcev1.FullyQualifiedName { q := resourcev1.FullyQualifiedName(s); return &q }

// nicOf is the Rail device of an allocation.
func nicOf(a *resourcev1.AllocationResult) resourcev1.DeviceRequestAllocationResult {
	for _, r := range a.Devices.Results {
		if r.Driver == "rail.dev" {
			return r
		}
	}
	return resourcev1.DeviceRequestAllocationResult{}
}

// TestSchedulerAlignsRailNICsWithGPUs: the scheduler's own allocator,
// given Rail's slice and a GPU driver's (NVIDIA-shaped) slice of the same
// fake machine, gives each claim of one GPU and one exclusive Rail NIC
// with matchAttribute pcieRoot a NIC under that GPU's root; on the
// Hyper-V machine no root matches, and numaNode aligns instead. The
// allocated device, prepared by raild's driver, names a NIC on that root.
func TestSchedulerAlignsRailNICsWithGPUs(t *testing.T) {
	for _, tc := range []struct {
		machine, align string
		modes          []string
		wantNone       bool
	}{
		{machine: "h100x8-cx7x4", align: "resource.kubernetes.io/pcieRoot"},
		{machine: "twolevel-2s", align: "resource.kubernetes.io/pcieRoot"},
		{machine: "azure-ndh100v5", align: "resource.kubernetes.io/pcieRoot", wantNone: true},
		{machine: "azure-ndh100v5", align: "resource.kubernetes.io/numaNode"},
		{machine: "gb200-tray", align: "resource.kubernetes.io/numaNode"},
	} {
		t.Run(tc.machine+" by "+filepath.Base(tc.align), func(t *testing.T) {
			m := fakeMachine(t, tc.machine)
			cfg := draplugin.Config{ExclusivePorts: true}
			s := newScheduler(t, railSlice(t, m, cfg, draplugin.NodeView{}), dradriver.GPUSlice(m, allocNode))
			claims, err := draplugin.OpenClaims(draplugin.ClaimsFile(t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			p, err := draplugin.New(draplugin.Options{Config: cfg, Node: allocNode, Claims: claims,
				View: func() draplugin.NodeView { return draplugin.NodeView{Machine: m} }})
			if err != nil {
				t.Fatal(err)
			}
			// each NIC is one claim's: a GPU gets one while its root (NUMA node) has one left
			place := func(numa int, root string) string {
				if tc.align == "resource.kubernetes.io/pcieRoot" {
					return root
				}
				return fmt.Sprint(numa)
			}
			free := map[string]int{}
			for _, n := range m.NICs {
				free[place(n.NUMA, n.Root)]++
			}
			for _, g := range m.GPUs {
				gpuNUMA := g.NUMA
				if g.C2C {
					gpuNUMA = g.CPUNode
				}
				claim := gpuAndNIC(fmt.Sprintf("c%d", g.Index), g.Index, tc.align)
				a := s.allocate(claim)
				left := free[place(gpuNUMA, g.Root)]
				if tc.wantNone {
					if a != nil {
						t.Fatalf("GPU%d: allocated %+v where no root matches", g.Index, a.Devices.Results)
					}
					continue
				}
				switch {
				case a == nil && left > 0:
					t.Fatalf("GPU%d: the scheduler cannot allocate a NIC aligned by %s while %d are free there", g.Index, tc.align, left)
				case a == nil:
					t.Logf("GPU%d: no NIC left on its %s: Pending, as it should", g.Index, filepath.Base(tc.align))
					continue
				case left == 0:
					t.Fatalf("GPU%d: allocated %+v with no aligned NIC free", g.Index, a.Devices.Results)
				}
				free[place(gpuNUMA, g.Root)]--
				claim.Status.Allocation = a
				claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "pod-" + claim.Name, UID: "p-" + claim.UID}}
				res, err := p.PrepareResourceClaims(context.Background(), []*resourcev1.ResourceClaim{claim})
				if err != nil || res[claim.UID].Err != nil {
					t.Fatalf("prepare: %v %v", err, res[claim.UID].Err)
				}
				prep, _ := claims.Get(claim.UID)
				nic, ok := m.NICByName(prep.Devices[0].NIC)
				if !ok || prep.Devices[0].Device != nicOf(a).Device {
					t.Fatalf("prepared %+v for allocated %+v", prep.Devices, nicOf(a))
				}
				switch tc.align {
				case "resource.kubernetes.io/pcieRoot":
					if nic.Root != g.Root {
						t.Errorf("GPU%d (root %s) got %s on root %s", g.Index, g.Root, nic.Name, nic.Root)
					}
				default:
					if nic.NUMA != gpuNUMA {
						t.Errorf("GPU%d (NUMA %d) got %s on NUMA %d", g.Index, gpuNUMA, nic.Name, nic.NUMA)
					}
				}
				t.Logf("GPU%d -> %s (%s)", g.Index, nic.Name, m.Distance(g, nic))
			}
		})
	}
}

// TestSchedulerSharesAPort: with sharedSlots 2, the scheduler gives two
// claims one port and refuses the third until one goes; a port that is
// down is never given, one taken outside DRA neither.
func TestSchedulerSharesAPort(t *testing.T) {
	m := fakeMachine(t, "down-bond")
	slice := railSlice(t, m, draplugin.Config{SharedSlots: 2}, draplugin.NodeView{})
	s := newScheduler(t, slice)
	shared := func(name, rdma string) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name},
			Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
				{Name: "nic", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "rail.dev-shared", AllocationMode: one, Count: 1,
					Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
						Expression: fmt.Sprintf(`device.attributes["rail.dev"].rdmaDevice == %q`, rdma)}}},
					Capacity: &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{
						"rail.dev/slots": resource.MustParse("1")}}}}}}}}
	}
	first, second := s.allocate(shared("prefill", "mlx5_0")), s.allocate(shared("decode", "mlx5_0"))
	if first == nil || second == nil {
		t.Fatalf("two sharers: %v %v", first, second)
	}
	a, b := nicOf(first), nicOf(second)
	if a.Device != "mlx5-0" || b.Device != "mlx5-0" || a.ShareID == nil || b.ShareID == nil || *a.ShareID == *b.ShareID {
		t.Fatalf("the sharers got %+v and %+v: want mlx5-0 twice with their own share IDs", a, b)
	}
	if q := a.ConsumedCapacity["rail.dev/slots"]; q.Value() != 1 {
		t.Errorf("consumed %v, want one slot", a.ConsumedCapacity)
	}
	if third := s.allocate(shared("third", "mlx5_0")); third != nil {
		t.Fatalf("a third sharer of a 2-slot port was allocated %+v", third.Devices.Results)
	}
	// the first sharer goes: its slot comes back
	id := structured.MakeDeviceID(a.Driver, a.Pool, a.Device)
	s.state.AggregatedCapacity.Remove(structured.NewDeviceConsumedCapacity(id, a.ConsumedCapacity))
	s.state.AllocatedSharedDeviceIDs.Delete(structured.MakeSharedDeviceID(id, a.ShareID))
	if third := s.allocate(shared("third", "mlx5_0")); third == nil {
		t.Fatal("the third sharer stays unallocated after a sharer went")
	}
	if down := s.allocate(shared("down", "mlx5_1")); down != nil {
		t.Fatalf("the down port mlx5_1 (tainted NoSchedule) was allocated %+v", down.Devices.Results)
	}
	taken := railSlice(t, m, draplugin.Config{ExclusivePorts: true}, draplugin.NodeView{Uses: []draplugin.Use{{NIC: "mlx5_0", Pod: "ml/old", Mode: "move"}}})
	exclusive := newScheduler(t, taken)
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "x"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "nic", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "rail.dev-exclusive", AllocationMode: one, Count: 1, Selectors: []resourcev1.DeviceSelector{
				{CEL: &resourcev1.CELDeviceSelector{Expression: `device.attributes["rail.dev"].rdmaDevice == "mlx5_0"`}}}}}}}}}
	if got := exclusive.allocate(claim); got != nil {
		t.Fatalf("a port moved into a pod outside DRA was allocated %+v", got.Devices.Results)
	}
}
