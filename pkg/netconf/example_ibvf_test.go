package netconf

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestIBVFExample loads the InfiniBand VF NAD of manifests/examples as
// rail does, with the GUID Multus passes for its capability.
func TestIBVFExample(t *testing.T) {
	data, err := os.ReadFile("../../manifests/examples/nad-rail-ib-vf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var nad struct {
		Spec struct {
			Config string `json:"config"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &nad); err != nil {
		t.Fatalf("parse the example: %v", err)
	}
	conf := strings.TrimSpace(nad.Spec.Config)
	withGUID := strings.TrimSuffix(conf, "}") + `,"runtimeConfig":{"infinibandGUID":"02:00:00:00:00:00:00:01"}}`
	c, err := LoadRail([]byte(withGUID))
	if err != nil {
		t.Fatalf("LoadRail(%s): %v", withGUID, err)
	}
	if c.InfinibandGUID().String() != "02:00:00:00:00:00:00:01" || c.VFConfig().LinkState == nil {
		t.Errorf("GUID %s, VFConfig %+v", c.InfinibandGUID(), c.VFConfig())
	}
}
