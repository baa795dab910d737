package vfpf

import (
	"fmt"
	"net"
	"reflect"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

// recorder is a PF that records each call.
type recorder struct{ calls []string }

func (r *recorder) VFState(string, int) (State, error) { return State{}, nil }
func (r *recorder) SetVFMAC(pf string, vf int, mac net.HardwareAddr) error {
	r.calls = append(r.calls, fmt.Sprintf("%s/%d mac %s", pf, vf, mac))
	return nil
}
func (r *recorder) SetVFVLAN(pf string, vf, vlan, qos int, proto uint16) error {
	r.calls = append(r.calls, fmt.Sprintf("%s/%d vlan %d qos %d proto %#x", pf, vf, vlan, qos, proto))
	return nil
}
func (r *recorder) SetVFSpoofchk(pf string, vf int, on bool) error {
	r.calls = append(r.calls, fmt.Sprintf("%s/%d spoofchk %v", pf, vf, on))
	return nil
}
func (r *recorder) SetVFTrust(pf string, vf int, on bool) error {
	r.calls = append(r.calls, fmt.Sprintf("%s/%d trust %v", pf, vf, on))
	return nil
}
func (r *recorder) SetVFLinkState(pf string, vf int, state api.VFLinkState) error {
	r.calls = append(r.calls, fmt.Sprintf("%s/%d state %d", pf, vf, state))
	return nil
}
func (r *recorder) SetVFRate(pf string, vf int, minMbps, maxMbps uint32) error {
	r.calls = append(r.calls, fmt.Sprintf("%s/%d rate %d %d", pf, vf, minMbps, maxMbps))
	return nil
}
func (r *recorder) SetVFGUID(pf string, vf int, node, port net.HardwareAddr) error {
	r.calls = append(r.calls, fmt.Sprintf("%s/%d guid %s %s", pf, vf, node, port))
	return nil
}

// TestSteps: each setting the config asks for is one step, in the order
// VLAN, spoofchk, link state, rates, trust; each step's inverse puts back
// the value the VF had, and the Settings record those values: Reset from
// them puts back the same, trust first, then link state, rates, spoofchk,
// VLAN. The MAC and GUIDs are not vfpf's steps.
func TestSteps(t *testing.T) {
	vlan, qos, on, off, enable := 100, 3, true, false, api.VFLinkEnable
	maxRate := uint32(2000)
	before := State{MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, VLAN: 7, QoS: 1, VLANProto: api.VLANProto8021AD, Spoofchk: true,
		LinkState: api.VFLinkAuto, MinTxRate: 10, MaxTxRate: 0}
	tests := []struct {
		name     string
		cfg      api.VFConfig
		settings []string // the steps' settings, in order
		do       []string
		undo     []string // run in reverse, as an undo list does
		reset    []string // Reset from the record
	}{
		{name: "nothing asked"},
		{name: "MAC alone is not a step here", cfg: api.VFConfig{MAC: net.HardwareAddr{2, 0, 0, 0, 0, 9}}},
		{name: "every setting", cfg: api.VFConfig{VLAN: &vlan, QoS: qos, Spoofchk: &off, LinkState: &enable, MaxTxRate: &maxRate, Trust: &on},
			settings: []string{"vlan", "spoofchk", "link_state", "min_tx_rate/max_tx_rate", "trust"},
			do:       []string{"pf0/2 vlan 100 qos 3 proto 0x8100", "pf0/2 spoofchk false", "pf0/2 state 1", "pf0/2 rate 10 2000", "pf0/2 trust true"},
			undo:     []string{"pf0/2 trust false", "pf0/2 rate 10 0", "pf0/2 state 0", "pf0/2 spoofchk true", "pf0/2 vlan 7 qos 1 proto 0x88a8"},
			reset:    []string{"pf0/2 trust false", "pf0/2 state 0", "pf0/2 rate 10 0", "pf0/2 spoofchk true", "pf0/2 vlan 7 qos 1 proto 0x88a8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pf := &recorder{}
			steps, rec := Steps(pf, VF{PF: "pf0", Index: 2}, before, tt.cfg)
			var settings []string
			for _, st := range steps {
				settings = append(settings, st.Setting)
				if err := st.Do(); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(settings, tt.settings) || !reflect.DeepEqual(pf.calls, tt.do) {
				t.Fatalf("steps %q sent %q; want %q sending %q", settings, pf.calls, tt.settings, tt.do)
			}
			pf.calls = nil
			for i := len(steps) - 1; i >= 0; i-- {
				if err := steps[i].Undo(); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(pf.calls, tt.undo) {
				t.Fatalf("inverses sent %q, want %q", pf.calls, tt.undo)
			}
			pf.calls = nil
			if err := Reset(pf, VF{PF: "pf0", Index: 2}, rec); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pf.calls, tt.reset) {
				t.Fatalf("Reset from the record sent %q, want %q", pf.calls, tt.reset)
			}
		})
	}
}
