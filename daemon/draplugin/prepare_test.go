package draplugin

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

const testNode = "node1"

// newPlugin is a plugin on a fake machine without an API server; the
// claims live in dir.
func newPlugin(t *testing.T, m *topology.Machine, modes []api.Mode, dir string) *Plugin {
	t.Helper()
	claims, err := OpenClaims(ClaimsFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Node: testNode, Claims: claims, Pools: func() []string { return []string{"rdma", "vfs"} },
		View: func() NodeView { return NodeView{Machine: m, Limits: Limits{Modes: modes}} }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type result struct{ request, device string }

// claim is an allocated claim reserved for pod ns/pod-<name>; params
// (JSON, "" none) is the claim's own config for every request.
func claim(name string, params string, results ...result) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID("uid-" + name)}}
	alloc := &resourcev1.AllocationResult{}
	for _, r := range results {
		alloc.Devices.Results = append(alloc.Devices.Results, resourcev1.DeviceRequestAllocationResult{
			Request: r.request, Driver: DefaultDriverName, Pool: testNode, Device: r.device})
	}
	alloc.Devices.Results = append(alloc.Devices.Results, resourcev1.DeviceRequestAllocationResult{
		Request: "gpu", Driver: "gpu.nvidia.com", Pool: testNode, Device: "gpu-0"})
	if params != "" {
		alloc.Devices.Config = []resourcev1.DeviceAllocationConfiguration{{Source: resourcev1.AllocationConfigSourceClaim,
			DeviceConfiguration: resourcev1.DeviceConfiguration{Opaque: &resourcev1.OpaqueDeviceConfiguration{
				Driver: DefaultDriverName, Parameters: runtime.RawExtension{Raw: []byte(params)}}}}}
	}
	c.Status.Allocation = alloc
	c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "pod-" + name, UID: types.UID("pod-uid-" + name)}}
	return c
}

func prepareOne(t *testing.T, p *Plugin, c *resourcev1.ResourceClaim) kubeletplugin.PrepareResult {
	t.Helper()
	out, err := p.PrepareResourceClaims(context.Background(), []*resourcev1.ResourceClaim{c})
	if err != nil {
		t.Fatal(err)
	}
	return out[c.UID]
}

func TestPrepareValidates(t *testing.T) {
	notAllocated := claim("bare", "")
	notAllocated.Status.Allocation = nil
	otherPool := claim("pool", "", result{"nic", "mlx5-0"})
	otherPool.Status.Allocation.Devices.Results[0].Pool = "node2"
	for _, tc := range []struct {
		name    string
		machine string
		modes   []api.Mode
		claim   *resourcev1.ResourceClaim
		wantErr string
		want    Params
	}{
		{name: "no parameters: the device's mode", machine: "h100x8-cx7x4", claim: claim("a", "", result{"nic", "mlx5-0"}),
			want: Params{Mode: api.ModeIPoIB}},
		{name: "mode and pool", machine: "h100x8-cx7x4", claim: claim("a", `{"mode":"ipoib","pool":"rdma"}`, result{"nic", "mlx5-0"}),
			want: Params{Mode: api.ModeIPoIB, Pool: "rdma"}},
		{name: "a mode the device does not serve", machine: "h100x8-cx7x4", claim: claim("a", `{"mode":"move"}`, result{"nic", "mlx5-0"}),
			wantErr: `claim ml/a request "nic": parameters.mode "move": device mlx5-0 (shared) serves ipoib`},
		{name: "an unknown pool", machine: "h100x8-cx7x4", claim: claim("a", `{"pool":"nope"}`, result{"nic", "mlx5-0"}),
			wantErr: `parameters.pool "nope": no such pool on this node (pools: rdma, vfs)`},
		{name: "VF keys outside vf mode", machine: "h100x8-cx7x4", claim: claim("a", `{"vlan":5}`, result{"nic", "mlx5-0"}),
			wantErr: "parameters.vlan: VF keys are for vf mode"},
		{name: "an unknown key", machine: "h100x8-cx7x4", claim: claim("a", `{"modes":"ipoib"}`, result{"nic", "mlx5-0"}),
			wantErr: `config[0] (FromClaim) opaque.parameters`},
		{name: "VF keys in vf mode", machine: "h100x8-cx7x8-sriov", modes: []api.Mode{api.ModeVF},
			claim: claim("a", `{"vlan":100,"spoofchk":"off"}`, result{"nic", "mlx5-2-vf1"}), want: func() Params {
				v := 100
				return Params{Mode: api.ModeVF, VFKeys: api.VFKeys{VLAN: &v, Spoofchk: "off"}}
			}()},
		{name: "a bad VF key", machine: "h100x8-cx7x8-sriov", modes: []api.Mode{api.ModeVF},
			claim: claim("a", `{"vlan":5000}`, result{"nic", "mlx5-2-vf1"}), wantErr: "parameters.vlan 5000"},
		{name: "not allocated", machine: "h100x8-cx7x4", claim: notAllocated, wantErr: "claim ml/bare is not allocated"},
		{name: "another node's pool", machine: "h100x8-cx7x4", claim: otherPool, wantErr: `pool "node2", but this node publishes pool "node1"`},
		{name: "a device this node does not publish", machine: "h100x8-cx7x4", claim: claim("a", "", result{"nic", "mlx5-7"}),
			wantErr: `results[0] (request "nic", device mlx5-7): this node publishes no such device now`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := newPlugin(t, machine(t, tc.machine), tc.modes, dir)
			res := prepareOne(t, p, tc.claim)
			if tc.wantErr != "" {
				if res.Err == nil || !strings.Contains(res.Err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", res.Err, tc.wantErr)
				}
				if len(p.Claims().All()) != 0 {
					t.Errorf("a refused claim was recorded: %+v", p.Claims().All())
				}
				return
			}
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if len(res.Devices) != 1 || res.Devices[0].PoolName != testNode || res.Devices[0].Requests[0] != "nic" {
				t.Errorf("devices %+v", res.Devices)
			}
			prep, ok := p.Claims().Get(tc.claim.UID)
			if !ok || len(prep.Devices) != 1 {
				t.Fatalf("record %+v", prep)
			}
			got := prep.Devices[0].Params
			if got.Mode != tc.want.Mode || got.Pool != tc.want.Pool || got.VFKeys.First() != tc.want.VFKeys.First() {
				t.Errorf("params %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestPrepareIsIdempotentAndSurvivesARestart: the kubelet prepares
// again after a restart of either side; raild restarted between prepare
// and ADD still knows the claim's devices; unprepare twice is fine.
func TestPrepareIsIdempotentAndSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	m := machine(t, "h100x8-cx7x4")
	p := newPlugin(t, m, nil, dir)
	c := claim("a", `{"pool":"rdma"}`, result{"nic", "mlx5-1"})
	first := prepareOne(t, p, c)
	again := prepareOne(t, p, c)
	if first.Err != nil || again.Err != nil || len(again.Devices) != 1 || again.Devices[0].DeviceName != first.Devices[0].DeviceName {
		t.Fatalf("first %+v, again %+v", first, again)
	}
	if n := len(p.Claims().All()); n != 1 {
		t.Fatalf("%d records after preparing twice", n)
	}
	restarted := newPlugin(t, m, nil, dir)
	got := restarted.Claims().ForPod("ml", "pod-a", "pod-uid-a")
	if len(got) != 1 || got[0].Devices[0].NIC != "mlx5_1" || got[0].Devices[0].Params.Pool != "rdma" {
		t.Fatalf("after a restart: %+v", got)
	}
	if !restarted.Claims().Pods()["ml/pod-a"] {
		t.Errorf("the claim's pod is not known as a claim's pod")
	}
	for range 2 {
		out, err := restarted.UnprepareResourceClaims(context.Background(), []kubeletplugin.NamespacedObject{{UID: c.UID}})
		if err != nil || out[c.UID] != nil {
			t.Fatalf("unprepare: %v %v", err, out)
		}
	}
	reopened, err := OpenClaims(ClaimsFile(dir))
	if err != nil || len(reopened.All()) != 0 {
		t.Fatalf("after unprepare: %v %+v", err, reopened.All())
	}
}

// TestPrepareLastLineOfDefence: an exclusive device is one claim's; a
// shared one takes several.
func TestPrepareLastLineOfDefence(t *testing.T) {
	for _, tc := range []struct {
		name    string
		modes   []api.Mode
		wantErr string
	}{
		{name: "exclusive", modes: []api.Mode{api.ModeMove}, wantErr: "the exclusive device is prepared for claim ml/a already"},
		{name: "shared", modes: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlugin(t, machine(t, "h100x8-cx7x4"), tc.modes, t.TempDir())
			if res := prepareOne(t, p, claim("a", "", result{"nic", "mlx5-2"})); res.Err != nil {
				t.Fatal(res.Err)
			}
			res := prepareOne(t, p, claim("b", "", result{"nic", "mlx5-2"}))
			switch {
			case tc.wantErr == "" && res.Err != nil:
				t.Fatal(res.Err)
			case tc.wantErr != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", res.Err, tc.wantErr)
			}
		})
	}
}

func TestClaimsFileDamaged(t *testing.T) {
	dir := t.TempDir()
	if err := writeFile(ClaimsFile(dir), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenClaims(filepath.Join(dir, "dra-claims.json")); err == nil || !strings.Contains(err.Error(), "prepares its claims again once it is removed") {
		t.Fatalf("error %v", err)
	}
}
