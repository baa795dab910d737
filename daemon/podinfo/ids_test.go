package podinfo_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/topology"
)

// TestGPUSourceResolver: every GPU ID shape the ADD (cni-args,
// rail.dev/gpus, the kubelet's device-plugin IDs) and NRI (CDI device
// names, the kubelet's IDs) accept, through the one resolver both use.
func TestGPUSourceResolver(t *testing.T) {
	const (
		uuid0 = "GPU-0a1b2c3d-0000-1111-2222-333344445555"
		uuid1 = "GPU-1a1b2c3d-0000-1111-2222-333344445555"
		mig   = "MIG-7e0d2c8a-aaaa-bbbb-cccc-ddddeeeeffff"
	)
	m := &topology.Machine{GPUs: []topology.GPU{
		{Index: 0, PCI: "0000:17:00.0", UUID: uuid0},
		{Index: 1, PCI: "0000:2a:00.0", UUID: uuid1},
		{Index: 2, PCI: "0000:3d:00.0"}, // UUID unknown
		{Index: 3, PCI: "0000:63:00.0", UUID: "GPU-3a1b2c3d-0000-1111-2222-333344445555"},
	}}
	withSlices := &podinfo.GPUSource{DRA: sliceTable{migs: map[string]string{mig: uuid1}}}
	tests := []struct {
		name    string
		source  *podinfo.GPUSource // nil: none (NRI without a GPU source)
		ids     []string
		want    []int
		unknown []string
	}{
		{name: "none"},
		{name: "index", ids: []string{"2"}, want: []int{2}},
		{name: "order first named, each GPU once", ids: []string{"3", "1", "3", uuid1}, want: []int{3, 1}},
		{name: "index with blanks around it", ids: []string{" 1 "}, want: []int{1}},
		{name: "index-strategy MIG device", ids: []string{"0:1", "0:2", "3:0"}, want: []int{0, 3}},
		{name: "UUID", ids: []string{uuid0}, want: []int{0}},
		{name: "UUID any case", ids: []string{strings.ToLower(uuid1)}, want: []int{1}},
		{name: "time-slicing replica", ids: []string{uuid1 + "::3", "2::0"}, want: []int{1, 2}},
		{name: "legacy MIG id", ids: []string{"MIG-" + uuid0 + "/1/0"}, want: []int{0}},
		{name: "modern MIG UUID through the slices", source: withSlices, ids: []string{mig}, want: []int{1}},
		{name: "modern MIG UUID without slices", ids: []string{mig}, unknown: []string{mig}},
		{name: "PCI address", ids: []string{"0000:2A:00.0"}, want: []int{1}},
		{name: "nvidia-smi PCI address", ids: []string{"00000000:3d:00.0"}, want: []int{2}},
		{name: "short PCI address", ids: []string{"63:00.0"}, want: []int{3}},
		{name: "resolved and unknown side by side", ids: []string{"1", "GPU-ffff", "9"}, want: []int{1}, unknown: []string{"GPU-ffff", "9"}},
		{name: "empty entry", ids: []string{""}, unknown: []string{""}},
		{name: "CDI's all is the caller's, not an ID", ids: []string{"all"}, unknown: []string{"all"}},
		{name: "negative index", ids: []string{"-1"}, unknown: []string{"-1"}},
		{name: "unknown PCI address", ids: []string{"0000:99:00.0"}, unknown: []string{"0000:99:00.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gpus, failed := tt.source.Resolver(m).IDs(tt.ids)
			if !reflect.DeepEqual(gpus, tt.want) {
				t.Errorf("GPUs = %v, want %v", gpus, tt.want)
			}
			var unknown []string
			for _, f := range failed {
				unknown = append(unknown, f.ID)
				if !strings.Contains(f.Err.Error(), `"`+f.ID+`"`) {
					t.Errorf("reason %q does not name %q", f.Err, f.ID)
				}
			}
			if !reflect.DeepEqual(unknown, tt.unknown) {
				t.Errorf("unresolved = %q, want %q", unknown, tt.unknown)
			}
		})
	}
}
