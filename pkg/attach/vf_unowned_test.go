package attach

import (
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/vfpf"
)

// TestCleanVF: vfpf.Clean on a PF that behaves as igb does: a VF found leaked gets the kernel's clean state through its
// PF, trust off first and the admin MAC last; only what differs is sent,
// so an igb PF (no link state) is never asked for one; a VF that is gone
// needs nothing; a failed call is said, naming the setting.
func TestCleanVF(t *testing.T) {
	leakedMAC := net.HardwareAddr{0x02, 0, 0, 0, 0, 0xaa}
	clean := vfpf.State{MAC: make(net.HardwareAddr, 6), VLANProto: VLANProto8021Q, Spoofchk: true}
	tests := []struct {
		name      string
		before    vfpf.State
		index     int
		failFrom  int
		wantCalls []string
		wantErr   string
	}{
		{name: "a pod's whole setup", before: vfpf.State{MAC: leakedMAC, VLAN: 100, QoS: 3, VLANProto: VLANProto8021AD, Trust: true, MaxTxRate: 500},
			wantCalls: []string{"trust false", "rate 0 0", "spoofchk true", "vlan 0 qos 0 proto 0x8100", "mac 00:00:00:00:00:00"}},
		{name: "only a MAC", before: vfpf.State{MAC: leakedMAC, VLANProto: VLANProto8021Q, Spoofchk: true},
			wantCalls: []string{"mac 00:00:00:00:00:00"}},
		{name: "nothing to clean", before: clean},
		{name: "a VF its PF does not report", index: 9},
		{name: "a call that fails", before: vfpf.State{MAC: leakedMAC, VLAN: 7, Spoofchk: true}, failFrom: 1,
			wantCalls: []string{"vlan 0 qos 0 proto 0x8100", "mac 00:00:00:00:00:00"}, wantErr: "reset vlan of VF 0 of PF pf0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pf := newFakePF("pf0", 2)
			pf.vfs[0] = tt.before
			pf.failFrom = tt.failFrom
			got, err := vfpf.Clean(pf, vfpf.VF{PF: "pf0", Index: tt.index})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if calls := pf.callLog(); !slices.Equal(calls, tt.wantCalls) {
				t.Fatalf("calls %q, want %q", calls, tt.wantCalls)
			}
			if tt.index != 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.before) {
				t.Errorf("returned %+v, want the state found %+v", got, tt.before)
			}
			if after := pf.state(0); tt.wantErr == "" && (!reflect.DeepEqual(after.MAC, clean.MAC) || after.VLAN != 0 || after.QoS != 0 ||
				after.Trust || !after.Spoofchk || after.MinTxRate != 0 || after.MaxTxRate != 0) {
				t.Errorf("VF left %+v, want clean", after)
			}
		})
	}
}
