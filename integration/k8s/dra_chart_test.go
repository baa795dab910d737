package k8s

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// renderedDocs are the kinds and names of every document in out, with its text.
func renderedDocs(t *testing.T, out string) map[string]string {
	t.Helper()
	docs := map[string]string{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var meta struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil || meta.Kind == "" {
			continue
		}
		docs[meta.Kind+"/"+meta.Metadata.Name] = doc
	}
	return docs
}

// TestChartDRA: dra.enabled is off by default (no DeviceClass, no DRA
// RBAC, no kubelet plugin dirs, no dra section); on, the chart renders the
// DeviceClasses, exactly the RBAC the driver needs, the plugin dirs and a
// dra section raild accepts.
func TestChartDRA(t *testing.T) {
	helm, chart := chartRig(t)
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1") // raild in a pod: the API connection is on
	t.Setenv("NODE_NAME", "gpu-1")
	off := run(t, helm, "template", "rail", chart)
	if cfg := loadRendered(t, off); cfg.DRA.Enabled {
		t.Error("dra is on by default")
	}
	for _, s := range []string{"kind: DeviceClass", "resourceclaims", "plugins_registry", "dra:"} {
		if strings.Contains(off, s) {
			t.Errorf("the default chart renders %q", s)
		}
	}

	on := run(t, helm, "template", "rail", chart, "--set", "dra.enabled=true", "--set", "dra.sharedSlots=4", "--set", "dra.downAs=remove")
	cfg := loadRendered(t, on)
	if !cfg.DRA.Enabled || cfg.DRA.DriverName != "rail.dev" || cfg.DRA.SharedSlots != 4 || cfg.DRA.DownAs != "remove" || cfg.DRA.KubeletDir != "/var/lib/kubelet" {
		t.Errorf("rendered dra section %+v", cfg.DRA)
	}
	docs := renderedDocs(t, on)
	for name, expr := range map[string]string{
		"DeviceClass/rail.dev-exclusive": `device.driver == "rail.dev" && !device.attributes["rail.dev"].shared`,
		"DeviceClass/rail.dev-shared":    `device.driver == "rail.dev" && device.attributes["rail.dev"].shared`,
	} {
		doc, ok := docs[name]
		if !ok || !strings.Contains(doc, "apiVersion: resource.k8s.io/v1\n") || !strings.Contains(doc, expr) {
			t.Errorf("%s: %q, want resource.k8s.io/v1 selecting %s", name, doc, expr)
		}
	}
	var role struct {
		Rules []struct {
			APIGroups []string `json:"apiGroups"`
			Resources []string `json:"resources"`
			Verbs     []string `json:"verbs"`
		} `json:"rules"`
	}
	if err := yaml.Unmarshal([]byte(docs["ClusterRole/raild-default"]), &role); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			if slices.Contains(r.APIGroups, "resource.k8s.io") {
				got[res] = append(got[res], r.Verbs...)
			}
		}
	}
	for res, want := range map[string][]string{
		"resourceslices":        {"list", "watch", "create", "update", "delete"},
		"resourceclaims":        {"get"},
		"resourceclaims/status": {"patch"},
		"resourceclaims/driver": {"associated-node:patch"},
	} {
		if !slices.Equal(got[res], want) {
			t.Errorf("RBAC on %s: %v, want exactly %v", res, got[res], want)
		}
	}
	if len(got) != 4 {
		t.Errorf("RBAC on resource.k8s.io: %v, want only slices, claims, claims' status and its driver's entries", got)
	}
	if !strings.Contains(docs["ClusterRole/raild-default"], "resourceNames: [rail.dev]") {
		t.Error("resourceclaims/driver is not limited to Rail's driver")
	}
	ds := docs["DaemonSet/raild"]
	for _, s := range []string{"mountPath: /var/lib/kubelet/plugins_registry", "mountPath: /var/lib/kubelet/plugins/rail.dev",
		"path: /var/lib/kubelet/plugins/rail.dev, type: DirectoryOrCreate"} {
		if !strings.Contains(ds, s) {
			t.Errorf("the DaemonSet lacks %q", s)
		}
	}
}
