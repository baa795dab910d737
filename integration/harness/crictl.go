package harness

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Crictl runs a CRI rig's crictl (RigDir/bin/crictl) with the config its
// run directory holds (RunDir/crictl.yaml), as the VM and SR-IOV rigs'
// guests run it.
type Crictl struct {
	RigDir, RunDir string
}

// Run runs crictl and returns its trimmed stdout; stderr is part of the
// error. A call is bounded to three minutes.
func (c Crictl) Run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.RigDir, "bin/crictl"),
		append([]string{"--config", filepath.Join(c.RunDir, "crictl.yaml")}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return strings.TrimSpace(string(out)), fmt.Errorf("crictl %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// Must is Run that fails the test on error.
func (c Crictl) Must(t testing.TB, args ...string) string {
	t.Helper()
	out, err := c.Run(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
