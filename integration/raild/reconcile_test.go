package raild

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// TestReconcileOnStart: leases whose recorded netns path is gone are freed
// when raild starts again, whichever way it stopped; the others stay.
func TestReconcileOnStart(t *testing.T) {
	type lease struct {
		sandbox     string
		viaPlugin   bool // rail-ipam process, else api.Client
		netns       string
		removeNetns bool // the netns path disappears while raild is down
	}
	leases := []lease{
		{sandbox: "client-gone", netns: "ns-a", removeNetns: true},
		{sandbox: "plugin-gone", viaPlugin: true, netns: "ns-b", removeNetns: true},
		{sandbox: "client-kept", netns: "ns-c"},
		{sandbox: "plugin-kept", viaPlugin: true, netns: "ns-d"},
		{sandbox: "no-netns"},
	}
	tests := []struct {
		name string
		stop func(r *raildProc)
	}{
		{name: "after SIGTERM", stop: func(r *raildProc) { r.stop() }},
		{name: "after SIGKILL", stop: func(r *raildProc) { r.kill() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRaild(t, "10.9.0.0/16")
			r.start()
			ctx := context.Background()
			var want []string
			pods := map[string]*harness.NetNS{}
			for _, l := range leases {
				netns := ""
				if l.netns != "" {
					pods[l.netns] = podNetns(t)
					netns = pods[l.netns].Path
				}
				var via allocator = clientAllocator{r.client(), netns}
				if l.viaPlugin {
					via = pluginAllocator{railIPAM(r.socket), netns}
				}
				if _, err := via.add(ctx, l.sandbox); err != nil {
					t.Fatal(err)
				}
				if !l.removeNetns {
					want = append(want, l.sandbox)
				}
			}
			if got := sandboxes(r.mustLeases()); len(got) != len(leases) {
				t.Fatalf("leases before the restart = %v", got)
			}
			tt.stop(r)
			for _, l := range leases {
				if l.removeNetns {
					if err := pods[l.netns].Delete(); err != nil {
						t.Fatal(err)
					}
				}
			}
			r.start()
			sort.Strings(want)
			if got := sandboxes(r.mustLeases()); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("leases after the restart = %v, want %v", got, want)
			}
			pools, err := r.client().Pools(ctx)
			if err != nil || len(pools) != 1 || pools[0].Used != uint64(len(want)) {
				t.Fatalf("pools after the restart = %+v, %v; want %d used", pools, err, len(want))
			}
			// The runtime's late DEL for a reconciled sandbox must still succeed.
			if err := railIPAM(r.socket).del(ctx, "plugin-gone", filepath.Join(r.dir, "ns-b")); err != nil {
				t.Fatalf("DEL after reconcile: %v", err)
			}
		})
	}
}

func sandboxes(leases []api.Lease) []string {
	out := make([]string, 0, len(leases))
	for _, l := range leases {
		out = append(out, l.Sandbox)
	}
	sort.Strings(out)
	return out
}
