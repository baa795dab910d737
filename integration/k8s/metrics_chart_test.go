package k8s

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/railcni/rail/daemon/config"
)

// TestChartMetricsBind: metrics.bind puts raild's ops port on every
// address (the default), on the node's own address (from status.hostIP,
// by flag) or on the loopback (the probes then ask 127.0.0.1); raild
// accepts what each renders, and a bad value fails the render.
func TestChartMetricsBind(t *testing.T) {
	helm, chart := chartRig(t)
	for _, tc := range []struct {
		bind, addr, flag, nodeIP, probeHost string
	}{
		{bind: "all", addr: ":9473"},
		{bind: "node", addr: ":9473", flag: "--metrics-addr=$(NODE_IP):9473", nodeIP: "status.hostIP"},
		{bind: "localhost", addr: "127.0.0.1:9473", probeHost: "127.0.0.1"},
	} {
		out := run(t, helm, "template", "rail", chart, "--set", "metrics.bind="+tc.bind)
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(renderedConfig(t, out)), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path)
		if err != nil || cfg.MetricsAddr != tc.addr {
			t.Fatalf("%s: metricsAddr %q, %v; want %q", tc.bind, cfg.MetricsAddr, err, tc.addr)
		}
		raild := raildContainer(t, out)
		flag := ""
		for _, a := range raild.Args {
			if strings.HasPrefix(a, "--metrics-addr") {
				flag = a
			}
		}
		nodeIP := ""
		for _, e := range raild.Env {
			if e.Name == "NODE_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				nodeIP = e.ValueFrom.FieldRef.FieldPath
			}
		}
		if flag != tc.flag || nodeIP != tc.nodeIP {
			t.Errorf("%s: flag %q, NODE_IP from %q; want %q, %q", tc.bind, flag, nodeIP, tc.flag, tc.nodeIP)
		}
		for _, p := range []*corev1.Probe{raild.ReadinessProbe, raild.LivenessProbe} {
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Host != tc.probeHost || p.HTTPGet.Port.IntValue() != 9473 {
				t.Errorf("%s: probe %+v; want port 9473 on host %q", tc.bind, p, tc.probeHost)
			}
		}
	}
	bad, err := exec.Command(helm, "template", "rail", chart, "--set", "metrics.bind=public").CombinedOutput()
	if err == nil || !strings.Contains(string(bad), `metrics.bind "public": use all, node or localhost`) {
		t.Errorf("metrics.bind=public: %v\n%s", err, bad)
	}
}

// raildContainer is the raild container of the rendered DaemonSet.
func raildContainer(t *testing.T, out string) corev1.Container {
	t.Helper()
	for _, doc := range strings.Split(out, "\n---\n") {
		var ds appsv1.DaemonSet
		if err := yaml.Unmarshal([]byte(doc), &ds); err != nil || ds.Kind != "DaemonSet" {
			continue
		}
		for _, c := range ds.Spec.Template.Spec.Containers {
			if c.Name == "raild" {
				return c
			}
		}
	}
	t.Fatalf("helm template: no raild container in\n%s", out)
	return corev1.Container{}
}
