package service

import (
	"context"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestNICMovedTo: NRI learns which sandbox holds a NIC in move mode; a
// shared (macvlan) holder does not count, and a release clears it.
func TestNICMovedTo(t *testing.T) {
	tests := []struct {
		mode   api.Mode
		holder string
	}{
		{api.ModeMove, "s1"},
		{api.ModeMacvlan, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			svc, _ := newService(t, "lab-1x1", onePool(), nil)
			ctx := context.Background()
			req := allocReq("s1", "0")
			req.Mode = tt.mode
			if _, err := svc.Allocate(ctx, req); err != nil {
				t.Fatal(err)
			}
			if holder, moved := svc.NICMovedTo("mlx5_0"); holder != tt.holder || moved != (tt.holder != "") {
				t.Fatalf("NICMovedTo(mlx5_0) = %q, %v; want %q", holder, moved, tt.holder)
			}
			if err := svc.Release(ctx, api.AttachmentRequest{Sandbox: "s1", CNIIfName: "eth0", Network: "net"}); err != nil {
				t.Fatal(err)
			}
			if holder, moved := svc.NICMovedTo("mlx5_0"); moved {
				t.Fatalf("after release NICMovedTo(mlx5_0) = %q, true", holder)
			}
		})
	}
}
