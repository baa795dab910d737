package k8s

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// startDRADriver runs integration/cmd/fake-dra-nic-driver for the machine
// with extra flags (--gpus: the GPU stand-in), serving the kubelet's DRA
// plugin API, until the test ends; it returns once the driver's slice is
// published and the driver still runs.
func (c *cluster) startDRADriver(t *testing.T, m *machine, driver string, flags ...string) {
	t.Helper()
	bin := os.Getenv("RAIL_K8S_FAKEDRA")
	if bin == "" {
		t.Skip("RAIL_K8S_FAKEDRA is not set: run integration/k8s/run.sh (make test-k8s)")
	}
	nodeName := c.kubectl(t, "get", "nodes", "-o", "jsonpath={.items[0].metadata.name}")
	args := append([]string{"--root", m.root, "--node", nodeName, "--kubeconfig", c.kubeconfig(),
		"--kubelet-dir", filepath.Join(c.run, "kubelet/root")}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-exited
	})
	waitFor(t, "the "+driver+" driver's ResourceSlice", time.Minute, func() bool {
		out, _ := c.kubectlErr("get", "resourceslices", "-o", "jsonpath={.items[*].spec.driver}")
		return slices.Contains(strings.Fields(out), driver)
	})
	select {
	case err := <-exited:
		exited <- err // for the cleanup's wait
		t.Fatalf("the test DRA driver %s stopped: %v", driver, err)
	case <-time.After(2 * time.Second): // registered with the kubelet and serving
	}
}
