package serve

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/config"
)

func TestConnectKube(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	tests := []struct {
		name    string
		section config.Kubernetes
		env     string // $KUBERNETES_SERVICE_HOST
		wantNil bool
		wantErr string
	}{
		{name: "auto outside a pod: off", wantNil: true},
		{name: "off in a pod", section: config.Kubernetes{Enabled: "false"}, env: "10.96.0.1", wantNil: true},
		{name: "kubeconfig that does not exist", section: config.Kubernetes{Kubeconfig: missing},
			wantErr: "kubernetes (set kubernetes.enabled: false to run without an API server): kubeconfig"},
		{name: "on outside a pod without kubeconfig", section: config.Kubernetes{Enabled: "true"},
			wantErr: "in-cluster config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBERNETES_SERVICE_HOST", tt.env)
			cfg := &config.Config{NodeName: "n1", Kubernetes: tt.section}
			if err := cfg.Finish(); err != nil {
				t.Fatal(err)
			}
			clients, err := connectKube(cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || (clients == nil) != tt.wantNil {
				t.Fatalf("clients %v, err %v; want nil %v", clients, err, tt.wantNil)
			}
		})
	}
}
