package main

import (
	"reflect"
	"testing"

	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

func TestLeaseHolders(t *testing.T) {
	tests := []struct {
		name   string
		leases []ipam.Lease
		want   map[string]string
	}{
		{"none", nil, map[string]string{}},
		{"pod names", []ipam.Lease{{Sandbox: "s1", PodNamespace: "ns", PodName: "a", NICs: []string{"mlx5_0", "mlx5_1"}}},
			map[string]string{"mlx5_0": "ns/a", "mlx5_1": "ns/a"}},
		{"address only lease holds no NIC", []ipam.Lease{{Sandbox: "s2", PodName: "b"}}, map[string]string{}},
		{"no pod name: the sandbox", []ipam.Lease{{Sandbox: "s3", NICs: []string{"mlx5_2"}}}, map[string]string{"mlx5_2": "sandbox s3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := leaseHolders(tt.leases); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("leaseHolders = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNodeState(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "h100x8-cx7x4", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := fakesys.SetPortState(root, "mlx5_3", 1, "DOWN"); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.New(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := nodeState(inv)()
	if state.Version != 1 || len(state.NICs) != 4 {
		t.Fatalf("state = %+v", state)
	}
	for _, n := range state.NICs {
		if n.Active != (n.Name != "mlx5_3") || n.InPod {
			t.Errorf("%+v: want active except mlx5_3, none in a pod", n)
		}
	}
}
