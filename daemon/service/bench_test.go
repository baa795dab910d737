package service

import (
	"context"
	"fmt"
	"testing"

	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
)

// benchHeld is how many macvlan pods hold the node's NIC while a
// benchmark runs, so placement and the hot-path lookups see a busy node.
const benchHeld = 256

// busyService is lab-1x1 with benchHeld macvlan pods on mlx5_0.
func busyService(b *testing.B) *Service {
	b.Helper()
	svc, _ := newService(b, "lab-1x1", []ipam.PoolConfig{{Name: "rail", Subnet: "10.77.0.0/16"}}, nil)
	for i := range benchHeld {
		req := allocReq(fmt.Sprintf("held-%d", i), "0")
		req.Mode = api.ModeMacvlan
		if _, err := svc.Allocate(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
	return svc
}

// BenchmarkAllocateRelease is one macvlan ADD (placement and a durable
// lease) and its DEL, on a node where benchHeld pods share the NIC.
func BenchmarkAllocateRelease(b *testing.B) {
	svc := busyService(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		req := allocReq(fmt.Sprint("bench-", i), "0")
		req.Mode = api.ModeMacvlan
		if _, err := svc.Allocate(ctx, req); err != nil {
			b.Fatal(err)
		}
		if err := svc.Release(ctx, api.AttachmentRequest{Sandbox: req.Sandbox, CNIIfName: req.CNIIfName, Network: req.Network}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHotPath is what NRI asks on every CreateContainer.
func BenchmarkHotPath(b *testing.B) {
	svc := busyService(b)
	b.Run("SandboxLeases", func(b *testing.B) {
		for i := range b.N {
			if len(svc.SandboxLeases(fmt.Sprint("held-", i%benchHeld))) != 1 {
				b.Fatal("lease missing")
			}
		}
	})
	b.Run("NICMovedTo", func(b *testing.B) {
		for range b.N {
			if _, moved := svc.NICMovedTo("mlx5_0"); moved {
				b.Fatal("macvlan NIC reported moved")
			}
		}
	})
}
