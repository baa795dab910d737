package podinfo

import (
	"slices"
	"strings"
	"testing"
)

const (
	uuid0 = "GPU-0a1b2c3d-0000-1111-2222-333344445555"
	uuid1 = "GPU-1a1b2c3d-0000-1111-2222-333344445555"
	uuid3 = "GPU-3a1b2c3d-0000-1111-2222-333344445555"
	mig0  = "MIG-7e0d2c8a-aaaa-bbbb-cccc-ddddeeeeffff"
)

func testGPUs() []GPURef {
	return []GPURef{
		{Index: 0, PCI: "0000:17:00.0", UUID: uuid0},
		{Index: 1, PCI: "0000:2a:00.0", UUID: uuid1},
		{Index: 2, PCI: "0000:3d:00.0"}, // UUID unknown
		{Index: 3, PCI: "0000:63:00.0", UUID: uuid3},
	}
}

// migTable is a fixed MIG-to-parent table.
type migTable map[string]string

func (m migTable) MIGParents() map[string]string { return m }

func TestResolve(t *testing.T) {
	tests := []struct {
		name       string
		ids        []string
		gpus       []GPURef
		migParents map[string]string
		want       []int
		wantErr    []string // substrings the error must contain
	}{
		{name: "no ids", ids: nil, want: nil},
		{name: "index", ids: []string{"0"}, want: []int{0}},
		{name: "indices sorted and de-duplicated", ids: []string{"3", "1", "3", " 1 "}, want: []int{1, 3}},
		{name: "uuid", ids: []string{uuid1}, want: []int{1}},
		{name: "uuid any case", ids: []string{strings.ToUpper(uuid3)}, want: []int{3}},
		{name: "uuid and index of same gpu", ids: []string{uuid0, "0"}, want: []int{0}},
		{name: "time-slicing replica", ids: []string{uuid1 + "::2", "3::0"}, want: []int{1, 3}},
		{name: "legacy mig", ids: []string{"MIG-" + uuid3 + "/1/0"}, want: []int{3}},
		{name: "legacy mig without instances", ids: []string{"MIG-" + uuid3}, wantErr: []string{"MIG-" + uuid3, "MIG-GPU-<uuid>/<gi>/<ci>"}},
		{name: "index-strategy mig", ids: []string{"1:0", "1:2"}, want: []int{1}},
		{name: "mig uuid through map", ids: []string{mig0}, migParents: map[string]string{strings.ToUpper(mig0): uuid1}, want: []int{1}},
		{name: "mig uuid without map", ids: []string{mig0}, wantErr: []string{mig0, "rail.dev/gpus", "parent"}},
		{name: "mig uuid mapped to unknown parent", ids: []string{mig0}, migParents: map[string]string{mig0: "GPU-ffff"}, wantErr: []string{mig0, "gpu-ffff"}},
		{name: "pci address", ids: []string{"0000:2A:00.0"}, want: []int{1}},
		{name: "nvidia-smi pci address", ids: []string{"00000000:3d:00.0"}, want: []int{2}},
		{name: "short pci address", ids: []string{"63:00.0"}, want: []int{3}},
		{name: "unknown pci address", ids: []string{"0000:99:00.0"}, wantErr: []string{"0000:99:00.0", "GPU indices: 0,1,2,3"}},
		{name: "unknown index", ids: []string{"9"}, wantErr: []string{`"9"`, "GPU indices: 0,1,2,3"}},
		{name: "unknown uuid", ids: []string{"GPU-dead"}, wantErr: []string{"GPU-dead", "no GPU with UUID"}},
		{name: "negative index", ids: []string{"-1"}, wantErr: []string{`"-1"`, "not a GPU index"}},
		{name: "garbage", ids: []string{"foo"}, wantErr: []string{`"foo"`, "not a GPU index"}},
		{name: "empty id", ids: []string{" "}, wantErr: []string{`" "`, "empty id"}},
		{name: "every bad id named", ids: []string{"0", "7", "bar"}, wantErr: []string{`"7"`, `"bar"`}},
		{name: "node without gpus", ids: []string{"0"}, gpus: []GPURef{}, wantErr: []string{`"0"`, "no GPUs found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gpus := tt.gpus
			if gpus == nil {
				gpus = testGPUs()
			}
			got, err := Resolver{GPUs: gpus, MIG: migTable(tt.migParents)}.Resolve(tt.ids)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Resolve(%q) = %v, want an error", tt.ids, got)
				}
				for _, part := range tt.wantErr {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not contain %q", err, part)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.ids, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Resolve(%q) = %v, want %v", tt.ids, got, tt.want)
			}
		})
	}
}

func TestResolveGPUsHasNoMIGMap(t *testing.T) {
	if _, err := (Resolver{GPUs: testGPUs()}).Resolve([]string{mig0}); err == nil {
		t.Fatal("Resolve resolved a MIG UUID without a MIG map")
	}
	got, err := (Resolver{GPUs: testGPUs()}).Resolve([]string{uuid3, "0"})
	if err != nil || !slices.Equal(got, []int{0, 3}) {
		t.Fatalf("Resolve = %v, %v; want [0 3]", got, err)
	}
}

func TestNormalizePCI(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"0000:17:00.0", "0000:17:00.0", true},
		{"00000000:17:00.1", "0000:17:00.1", true},
		{"17:00.0", "0000:17:00.0", true},
		{"0001:17:00.0", "0001:17:00.0", true},
		{"12340000:17:00.0", "", false},
		{"0000:17:00.8", "", false},
		{"0000:17:00", "", false},
		{"0000:1g:00.0", "", false},
		{"0", "", false},
		{"a:b:c:d", "", false},
	}
	for _, tt := range tests {
		got, ok := normalizePCI(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("normalizePCI(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func BenchmarkResolve(b *testing.B) {
	r := Resolver{GPUs: testGPUs()}
	ids := []string{uuid3, uuid0, "MIG-" + uuid1 + "/1/0"}
	for b.Loop() {
		if _, err := r.Resolve(ids); err != nil {
			b.Fatal(err)
		}
	}
}
