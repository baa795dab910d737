package service

import (
	"context"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestPlacementReadsTheLiveInventory: placement follows the inventory's
// current snapshot, so a port that goes DOWN is not handed out, a pod that
// holds it keeps its lease, and the port is used again once it is UP.
func TestPlacementReadsTheLiveInventory(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "h100x8-cx7x4", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Machine: inv.Machine, Alloc: openAlloc(t, onePool()),
		Rails: map[string]int{"mlx5_0": 0, "mlx5_1": 1, "mlx5_2": 2, "mlx5_3": 3}})
	if err != nil {
		t.Fatal(err)
	}
	inv.SetHolders(svc.NICHolders)
	ctx := context.Background()
	ipoibReq := func(sandbox, gpus string) api.AllocateRequest {
		r := allocReq(sandbox, gpus)
		r.Mode = api.ModeIPoIB
		return r
	}
	steps := []struct {
		name    string
		state   string // mlx5_0's port state before the step
		req     api.AllocateRequest
		want    string
		wantErr string
	}{
		{name: "ACTIVE: GPU 0 gets mlx5_0", state: "ACTIVE", req: ipoibReq("a", "0"), want: "rail0=mlx5_0"},
		{name: "DOWN: GPU 0 gets the next class", state: "DOWN", req: ipoibReq("b", "0"), want: "rail0=mlx5_1"},
		{name: "DOWN with a bound: refused, naming the port", state: "DOWN", req: func() api.AllocateRequest {
			r := ipoibReq("c", "0")
			r.Selector.NICs = []string{"mlx5_0"}
			return r
		}(), wantErr: "port DOWN"},
		{name: "UP again: mlx5_0 is used again", state: "ACTIVE", req: ipoibReq("d", "1"), want: "rail0=mlx5_0"},
	}
	for _, step := range steps {
		if err := fakesys.SetPortState(root, "mlx5_0", 1, step.state); err != nil {
			t.Fatal(err)
		}
		if _, err := inv.Rescan("test"); err != nil {
			t.Fatal(err)
		}
		plan, err := svc.Allocate(ctx, step.req)
		if step.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), step.wantErr) {
				t.Fatalf("%s: got %v, want an error mentioning %q", step.name, err, step.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := strings.Join(nicsOf(plan), ","); got != step.want {
			t.Fatalf("%s: interfaces = %s, want %s", step.name, got, step.want)
		}
	}
	if len(svc.SandboxLeases("a")) != 1 {
		t.Error("the pod holding mlx5_0 lost its lease when the port went DOWN")
	}
	if got := inv.Current().Machine; svc.Machine() != got {
		t.Error("the service does not read the inventory's current machine")
	}
	if h := svc.NICHolders(); h["mlx5_0"] != "default/pod-a, default/pod-d" || h["mlx5_1"] != "default/pod-b" {
		t.Errorf("NICHolders = %v", h)
	}
}
