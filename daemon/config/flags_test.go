package config

import (
	"flag"
	"testing"
)

// TestKubeconfigFlag: --kubeconfig fills the section and, under auto,
// turns the connection on.
func TestKubeconfigFlag(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	fs := flag.NewFlagSet("raild serve", flag.ContinueOnError)
	f := Flags{}
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "")
	fs.StringVar(&f.NodeName, "node-name", "", "")
	if err := fs.Parse([]string{"--kubeconfig", "/etc/k", "--node-name", "n1"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadWithFlags(fs, f)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Kubernetes.Kubeconfig != "/etc/k" || !cfg.Kubernetes.On {
		t.Errorf("kubernetes section %+v, want kubeconfig /etc/k and on", cfg.Kubernetes)
	}
}
