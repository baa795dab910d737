package recovery

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/statedir"
)

// TestRecoverRefusedWhileRaildRuns: `raild recover` rewrites the
// store only when no raild holds the state dir.
func TestRecoverRefusedWhileRaildRuns(t *testing.T) {
	dir := t.TempDir()
	stateDir, nsDir := filepath.Join(dir, "state"), filepath.Join(dir, "netns")
	if err := os.Mkdir(nsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "raild.yaml")
	if err := os.WriteFile(cfgPath, []byte("pools:\n  - name: p\n    subnet: 10.66.0.0/24\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	held, err := statedir.LockDir(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	var out bytes.Buffer
	err = run([]string{"--config", cfgPath, "--state-dir", stateDir, "--netns-dir", nsDir}, &out)
	want := fmt.Sprintf("in use by another raild (pid %d)", os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("recover with the state dir held = %v, want an error with %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(stateDir, "leases.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("recover wrote the store under a running raild (%v)", err)
	}
}
