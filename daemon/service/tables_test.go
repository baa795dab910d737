package service

import (
	"context"
	"reflect"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// TestPlanAcrossAttachments: a sandbox's second attachment gets its plan
// from the allocation's answer and the sandbox's other leases read with
// the placement (nothing read back after the commit): its policy tables
// count the first attachment's interfaces in the same subnet, and the
// fresh plan is the one a repeated ADD and CHECK give.
func TestPlanAcrossAttachments(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		first  string // the first attachment's GPUs ("": none attached before)
		tables bool   // the second attachment's interface gets a table
	}{
		{name: "alone in its subnet", tables: false},
		{name: "beside two rails of the subnet", first: "0,2", tables: true},
		{name: "beside one rail of the subnet", first: "0", tables: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, _ := newService(t, "h100x8-cx7x4", onePool(), nil)
			if tt.first != "" {
				if _, err := svc.Allocate(ctx, allocReq("s", tt.first)); err != nil {
					t.Fatal(err)
				}
			}
			second := allocReq("s", "")
			second.Chained, second.CNIIfName, second.Network = false, "net1", "nad"
			second.CNIArgs = &api.CNIArgs{GPUs: api.List{"4"}}
			fresh, err := svc.Allocate(ctx, second)
			if err != nil {
				t.Fatal(err)
			}
			if len(fresh.Interfaces) != 1 || (fresh.Interfaces[0].Table != 0) != tt.tables {
				t.Fatalf("second attachment's interfaces %+v; want a table %v", fresh.Interfaces, tt.tables)
			}
			again, err := svc.Allocate(ctx, second)
			if err != nil {
				t.Fatal(err)
			}
			checked, err := svc.Check(ctx, api.AttachmentRequest{Sandbox: "s", CNIIfName: "net1", Network: "nad"})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []*api.Plan{again, checked} {
				if !reflect.DeepEqual(p.Interfaces[0].Addresses, fresh.Interfaces[0].Addresses) || p.Interfaces[0].Table != fresh.Interfaces[0].Table ||
					p.Mode != fresh.Mode || p.Netns != fresh.Netns {
					t.Errorf("plan %+v differs from the fresh one %+v", p.Interfaces[0], fresh.Interfaces[0])
				}
			}
		})
	}
}
