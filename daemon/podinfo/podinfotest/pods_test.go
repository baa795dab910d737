package podinfotest

import (
	"strings"
	"testing"
)

func TestValidatePods(t *testing.T) {
	gpu := func(ids ...string) map[string][]string { return map[string][]string{"nvidia.com/gpu": ids} }
	tests := []struct {
		name    string
		pods    []Pod
		wantErr []string
	}{
		{name: "none", pods: nil},
		{name: "valid", pods: samplePods()},
		{name: "container without devices", pods: []Pod{{Namespace: "a", Name: "b", Containers: []Container{{Name: "c"}}}}},
		{name: "no namespace", pods: []Pod{{Name: "b"}}, wantErr: []string{"pods[0]", "namespace and name"}},
		{name: "no name", pods: []Pod{{Namespace: "a"}}, wantErr: []string{"pods[0]"}},
		{name: "pod twice", pods: []Pod{{Namespace: "a", Name: "b"}, {Namespace: "a", Name: "b"}}, wantErr: []string{"pods[1]", "a/b is listed twice"}},
		{name: "container without name", pods: []Pod{{Namespace: "a", Name: "b", Containers: []Container{{}}}}, wantErr: []string{"pods[0].containers[0]: name"}},
		{name: "container twice", pods: []Pod{{Namespace: "a", Name: "b", Containers: []Container{{Name: "c"}, {Name: "c"}}}}, wantErr: []string{"pods[0].containers[1]", `"c" is listed twice`}},
		{name: "empty resource", pods: []Pod{{Namespace: "a", Name: "b", Containers: []Container{{Name: "c", Devices: map[string][]string{"": {"0"}}}}}}, wantErr: []string{"resource name"}},
		{name: "empty device id", pods: []Pod{{Namespace: "a", Name: "b", Containers: []Container{{Name: "c", Devices: gpu("0", "")}}}}, wantErr: []string{`devices["nvidia.com/gpu"]`, "device IDs"}},
		{name: "claim", pods: []Pod{{Namespace: "a", Name: "b", Containers: []Container{{Name: "c", Claims: []Claim{
			{Namespace: "a", Name: "gpus", Devices: []ClaimDevice{{Driver: "gpu.nvidia.com", Pool: "node-1", Device: "gpu-0"}}}}}}}}},
		{name: "claim without name", pods: []Pod{{Namespace: "a", Name: "b", Containers: []Container{{Name: "c", Claims: []Claim{{Namespace: "a"}}}}}},
			wantErr: []string{"pods[0].containers[0].claims[0]", "namespace and name"}},
		{name: "claim device without pool", pods: []Pod{{Namespace: "a", Name: "b", Containers: []Container{{Name: "c", Claims: []Claim{
			{Namespace: "a", Name: "gpus", Devices: []ClaimDevice{{Driver: "gpu.nvidia.com", Device: "gpu-0"}}}}}}}},
			wantErr: []string{"claims[0].devices[0]", "driver, pool and device"}},
		{name: "all problems reported", pods: []Pod{{Name: "x"}, {Namespace: "a", Name: "b", Containers: []Container{{}}}}, wantErr: []string{"pods[0]", "pods[1].containers[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidatePods(tt.pods)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("ValidatePods: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("ValidatePods accepted invalid pods")
			}
			for _, part := range tt.wantErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
		})
	}
}
