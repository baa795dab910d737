package attach

import (
	"strings"
	"testing"
)

// TestAttachFailureLeavesNothing makes Attach fail at different steps and
// checks that host and pod netns are exactly as before.
func TestAttachFailureLeavesNothing(t *testing.T) {
	tests := []struct {
		name    string
		spec    func(nic string) Spec
		prepare func(e *testEnv)
		wantErr string
	}{
		{
			name: "move: unreachable route gateway",
			spec: func(nic string) Spec {
				return Spec{Mode: ModeMove, Parent: nic, Name: "rail0", MTU: 9000, ArpTuning: true,
					Addresses: prefixes("10.10.0.5/24"), Routes: []Route{route("10.20.0.0/16", "192.168.77.1")}}
			},
			wantErr: "add route 10.20.0.0/16 via 192.168.77.1",
		},
		{
			name: "move: unreachable ipv6 gateway in a table",
			spec: func(nic string) Spec {
				return Spec{Mode: ModeMove, Parent: nic, Name: "rail0", Table: 130,
					Addresses: prefixes("10.10.0.5/24", "fd00:10::5/64"), Routes: []Route{route("fd00:99::/64", "fd00:77::1")}}
			},
			wantErr: "add route fd00:99::/64 via fd00:77::1",
		},
		{
			name: "move: listed route duplicates the table's subnet route",
			spec: func(nic string) Spec {
				return Spec{Mode: ModeMove, Parent: nic, Name: "rail0", Table: 131,
					Addresses: prefixes("10.10.0.5/24"), Routes: []Route{route("10.10.0.0/24", "")}}
			},
			wantErr: "file exists",
		},
		{
			name: "move: name taken in the pod",
			spec: func(nic string) Spec {
				return Spec{Mode: ModeMove, Parent: nic, Name: "rail0", Addresses: prefixes("10.10.0.5/24")}
			},
			prepare: func(e *testEnv) { e.addPodVeth("rail0") },
			wantErr: "already has an interface named rail0",
		},
		{
			name: "move: parent missing in the host",
			spec: func(string) Spec {
				return Spec{Mode: ModeMove, Parent: "nicmissing0", Name: "rail0"}
			},
			wantErr: "host netdev nicmissing0",
		},
		{
			name: "macvlan: unreachable route gateway after arp tuning",
			spec: func(nic string) Spec {
				return Spec{Mode: ModeMacvlan, Parent: nic, Name: "net1", ArpTuning: true, Table: 132,
					Addresses: prefixes("10.10.0.5/24"), Routes: []Route{route("10.20.0.0/16", "192.168.77.1")}}
			},
			wantErr: "add route 10.20.0.0/16 via 192.168.77.1",
		},
		{
			name: "macvlan: mtu above the parent's",
			spec: func(nic string) Spec {
				return Spec{Mode: ModeMacvlan, Parent: nic, Name: "net1", MTU: 9000, Addresses: prefixes("10.10.0.5/24")}
			},
			wantErr: "MTU 9000 is above the MTU 1500 of parent",
		},
		{
			name: "macvlan: kernel refuses a multicast MAC",
			spec: func(nic string) Spec {
				return Spec{Mode: ModeMacvlan, Parent: nic, Name: "net1", MAC: "01:00:5e:00:00:01"}
			},
			wantErr: "create macvlan net1",
		},
		{
			name: "macvlan: name taken in the pod",
			spec: func(nic string) Spec {
				return Spec{Mode: ModeMacvlan, Parent: nic, Name: "net1"}
			},
			prepare: func(e *testEnv) { e.addPodVeth("net1") },
			wantErr: "already has an interface named net1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			nic := e.addNIC(1500, true)
			if tt.prepare != nil {
				tt.prepare(e)
			}
			hostBefore, podBefore := snapshot(t, e.host), snapshot(t, e.pod)
			_, err := e.attach(tt.spec(nic))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Attach = %v, want an error containing %q", err, tt.wantErr)
			}
			t.Logf("Attach error: %v", err)
			assertSame(t, "host netns", e.host, hostBefore)
			assertSame(t, "pod netns", e.pod, podBefore)
		})
	}
}
