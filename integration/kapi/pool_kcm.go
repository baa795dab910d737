package kapi

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/railcni/rail/integration/child"
)

// StartControllerManager runs kube-controller-manager against s with only
// the controllers named (e.g. "garbagecollector"), no leader election and
// no serving port, and stops it when the test ends. Its log is
// controller-manager.log in s.Dir.
func (s *Server) StartControllerManager(tb testing.TB, controllers string) {
	tb.Helper()
	path := filepath.Join(os.Getenv(EnvBin), "kube-controller-manager")
	log, err := os.Create(filepath.Join(s.Dir, "controller-manager.log"))
	if err != nil {
		tb.Fatalf("controller-manager log: %v", err)
	}
	defer log.Close()
	cmd := exec.Command(path, "--kubeconfig", s.Kubeconfig, "--controllers", controllers,
		"--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=false")
	cmd.Stdout, cmd.Stderr = log, log
	proc, err := child.Start(cmd, nil)
	if err != nil {
		tb.Fatalf("kube-controller-manager: %v", err)
	}
	tb.Cleanup(func() { proc.Stop(10 * time.Second) })
}
