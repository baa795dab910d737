package config

import (
	"strings"
	"testing"
	"time"
)

func TestKubernetesSection(t *testing.T) {
	inPod := func(k string) string {
		if k == "KUBERNETES_SERVICE_HOST" {
			return "10.96.0.1"
		}
		return ""
	}
	outside := func(string) string { return "" }
	tests := []struct {
		name    string
		section Kubernetes
		getenv  func(string) string
		wantOn  bool
		wantErr string
		// wantWait is checked when wantErr is empty
		wantWait time.Duration
	}{
		{name: "auto outside a pod", getenv: outside, wantOn: false, wantWait: DefaultPodWait},
		{name: "auto in a pod", getenv: inPod, wantOn: true, wantWait: DefaultPodWait},
		{name: "auto with a kubeconfig", section: Kubernetes{Kubeconfig: "/k"}, getenv: outside, wantOn: true, wantWait: DefaultPodWait},
		{name: "explicit auto", section: Kubernetes{Enabled: "auto"}, getenv: inPod, wantOn: true, wantWait: DefaultPodWait},
		{name: "off in a pod", section: Kubernetes{Enabled: "false"}, getenv: inPod, wantOn: false, wantWait: DefaultPodWait},
		{name: "on outside a pod", section: Kubernetes{Enabled: "true", PodWait: "500ms"}, getenv: outside, wantOn: true, wantWait: 500 * time.Millisecond},
		{name: "podWait zero", section: Kubernetes{PodWait: "0s"}, getenv: inPod, wantOn: true, wantWait: 0},
		{name: "enabled yes", section: Kubernetes{Enabled: "yes"}, getenv: outside, wantErr: `kubernetes.enabled "yes": want auto, true or false`},
		{name: "podWait not a duration", section: Kubernetes{PodWait: "3"}, getenv: outside, wantErr: `kubernetes.podWait "3": want a duration from 0s to 7s`},
		{name: "podWait negative", section: Kubernetes{PodWait: "-1s"}, getenv: outside, wantErr: `kubernetes.podWait "-1s"`},
		{name: "podWait beyond the plugin timeout", section: Kubernetes{PodWait: "30s"}, getenv: outside, wantErr: `kubernetes.podWait "30s"`},
		{name: "kubeconfig while off", section: Kubernetes{Enabled: "false", Kubeconfig: "/k"}, getenv: outside,
			wantErr: `kubernetes.kubeconfig "/k" is set but kubernetes.enabled is false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := tt.section
			err := k.finish(tt.getenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.On != tt.wantOn || k.PodWaitDuration != tt.wantWait {
				t.Errorf("on=%v wait=%s, want on=%v wait=%s", k.On, k.PodWaitDuration, tt.wantOn, tt.wantWait)
			}
		})
	}
}

func TestKubernetesNeedsNodeName(t *testing.T) {
	tests := []struct {
		name, node, enabled, wantErr string
	}{
		{name: "on without node", enabled: "true", wantErr: "nodeName: empty, but the API connection is on"},
		{name: "on with node", enabled: "true", node: "n1"},
		{name: "off without node", enabled: "false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NODE_NAME", "")
			c := &Config{NodeName: tt.node, Kubernetes: Kubernetes{Enabled: tt.enabled}}
			err := c.Finish()
			if (err != nil) != (tt.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
