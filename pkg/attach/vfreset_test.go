package attach

import (
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/vfpf"
)

// TestVFResetReadsPFOnlyOnFailure: vfpf.Reset sends what the record says
// without reading the PF first (a read's reply carries every VF's state
// and stats); a VF that is gone is read once, after the failed setting,
// and needs nothing; a failure on a VF that is there names the setting.
func TestVFResetReadsPFOnlyOnFailure(t *testing.T) {
	on, off := true, false
	rec := vfpf.Settings{Trust: &off, Spoofchk: &on, VLAN: &vfpf.VLAN{VLAN: 0, Proto: VLANProto8021Q}, Rate: &vfpf.Rate{}}
	cases := []struct {
		name      string
		pf        func() *fakePF
		wantErr   string
		wantReads int
		wantSets  int
	}{
		{"every setting, no read", func() *fakePF { return newFakePF("pf0", 2) }, "", 0, 4},
		{"VF gone: one read, no error", func() *fakePF {
			f := newFakePF("pf0", 2)
			delete(f.vfs, 1)
			return f
		}, "", 1, 1},
		{"PF gone: no error", func() *fakePF { return newFakePF("pf9", 2) }, "", 0, 1},
		{"a setting fails: named, the rest still sent", func() *fakePF {
			f := newFakePF("pf0", 2)
			f.failAt = 2
			return f
		}, "reset min_tx_rate/max_tx_rate of VF 1 of PF pf0", 1, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.pf()
			err := vfpf.Reset(f, vfpf.VF{PF: "pf0", Index: 1}, rec)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("reset: %v, want error %q", err, c.wantErr)
			}
			if f.reads != c.wantReads || f.sets != c.wantSets {
				t.Errorf("PF read %d times, set %d times (%v); want %d reads, %d sets", f.reads, f.sets, f.callLog(), c.wantReads, c.wantSets)
			}
		})
	}
}
