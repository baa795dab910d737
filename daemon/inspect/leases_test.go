package inspect

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeasesRecoverAlias: `raild leases --recover` is `raild recover`
// (parsed as a flag, its flags with it); recover's flags without it are
// refused, and a flag value spelled "recover" is only a value.
func TestLeasesRecoverAlias(t *testing.T) {
	tests := []struct {
		name      string
		args      func(cfg, stateDir, nsDir string) []string
		wantErr   string // "": no error
		wantStore bool   // leases.db written in the state dir
	}{
		{name: "--recover rebuilds", args: func(cfg, s, ns string) []string {
			return []string{"--recover", "--config", cfg, "--state-dir", s, "--netns-dir", ns}
		}, wantStore: true},
		{name: "flags before --recover", args: func(cfg, s, ns string) []string {
			return []string{"--config", cfg, "--state-dir", s, "--netns-dir", ns, "-recover"}
		}, wantStore: true},
		{name: "--recover=true --dry-run", args: func(cfg, s, ns string) []string {
			return []string{"--recover=true", "--dry-run", "--config", cfg, "--state-dir", s, "--netns-dir", ns}
		}},
		{name: "recover's flag without --recover", args: func(_, s, _ string) []string {
			return []string{"--state-dir", s}
		}, wantErr: "--state-dir is a flag of raild recover"},
		{name: "--recover=false", args: func(_, _, _ string) []string {
			return []string{"--recover=false", "--dry-run"}
		}, wantErr: "--dry-run is a flag of raild recover"},
		{name: "a value spelled recover", args: func(_, s, _ string) []string {
			return []string{"--socket", filepath.Join(s, "recover")}
		}, wantErr: "recover"},
		{name: "an argument", args: func(_, _, _ string) []string {
			return []string{"recover"}
		}, wantErr: `unexpected argument "recover"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, stateDir, nsDir := filepath.Join(dir, "raild.yaml"), filepath.Join(dir, "state"), filepath.Join(dir, "netns")
			if err := os.WriteFile(cfg, []byte("pools:\n  - name: p\n    subnet: 10.66.0.0/24\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(nsDir, 0o700); err != nil {
				t.Fatal(err)
			}
			err := Leases(tt.args(cfg, stateDir, nsDir))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("raild leases: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("raild leases = %v, want an error with %q", err, tt.wantErr)
			}
			_, statErr := os.Stat(filepath.Join(stateDir, "leases.db"))
			if wrote := statErr == nil; wrote != tt.wantStore {
				t.Errorf("lease store written: %v, want %v (%v)", wrote, tt.wantStore, statErr)
			}
			if !tt.wantStore && !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("state dir: %v", statErr)
			}
		})
	}
}
