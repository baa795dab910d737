package installcni

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// installCNIDirs makes a bin dir with both plugins, an empty host bin dir,
// and a conf dir holding Calico's conflist.
func installCNIDirs(t *testing.T) (from, to, confDir string, calico []byte) {
	t.Helper()
	root, err := os.MkdirTemp("", "ri-installcni-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	from, to, confDir = filepath.Join(root, "from"), filepath.Join(root, "to"), filepath.Join(root, "net.d")
	for _, dir := range []string{from, to, confDir} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"rail", "rail-ipam"} {
		if err := os.WriteFile(filepath.Join(from, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if calico, err = os.ReadFile("../cniconf/testdata/calico/10-calico.conflist"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "10-calico.conflist"), calico, 0o600); err != nil {
		t.Fatal(err)
	}
	return from, to, confDir, calico
}

func TestInstallCNICommand(t *testing.T) {
	tests := []struct {
		name       string
		args       []string // after --from, --to, --conf-dir
		configYAML string   // written to a file passed as --config
		noConfDir  bool
		wantErr    string
		wantOut    string
		wantEntry  string // "" = the conflist must be Calico's bytes
	}{
		{name: "nad by default: binaries only", wantOut: "installed"},
		{name: "chained", args: []string{"--mode", "chained"}, wantOut: "inserted rail's entry", wantEntry: `"type": "rail"`},
		{name: "chained with an entry", args: []string{"--mode=chained", `--entry={"type":"rail","mode":"macvlan"}`},
			wantEntry: `"mode": "macvlan"`},
		{name: "chained from raild's config", configYAML: "pools: []\ncni:\n  mode: chained\n  entry: {type: rail, pool: decode}\n",
			wantEntry: `"pool": "decode"`},
		{name: "flag wins over config", args: []string{"--mode", "nad"}, configYAML: "pools: []\ncni:\n  mode: chained\n"},
		{name: "no conf dir yet: said, not fatal", args: []string{"--mode", "chained"}, noConfDir: true,
			wantOut: "raild serve keeps trying"},
		{name: "bad mode", args: []string{"--mode", "chain"}, wantErr: `cni.mode "chain"`},
		{name: "bad entry", args: []string{"--mode", "chained", `--entry={"type":"rail","mtu":-1}`}, wantErr: "cni.entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to, confDir, calico := installCNIDirs(t)
			if tt.noConfDir {
				os.RemoveAll(confDir)
			}
			args := append([]string{"--from", from, "--to", to, "--conf-dir", confDir}, tt.args...)
			if tt.configYAML != "" {
				path := filepath.Join(filepath.Dir(confDir), "config.yaml")
				if err := os.WriteFile(path, []byte(tt.configYAML), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", path)
			}
			var out bytes.Buffer
			err := installCNI(args, &out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(out.String(), tt.wantOut) {
				t.Fatalf("install-cni: %v; output %q, want %q", err, out.String(), tt.wantOut)
			}
			if _, err := os.Stat(filepath.Join(to, "rail-ipam")); err != nil {
				t.Fatalf("binaries not installed: %v", err)
			}
			if tt.noConfDir {
				return
			}
			got, err := os.ReadFile(filepath.Join(confDir, "10-calico.conflist"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantEntry == "" && !bytes.Equal(got, calico) || tt.wantEntry != "" && !bytes.Contains(got, []byte(tt.wantEntry)) {
				t.Fatalf("conflist:\n%s\nwant entry %q", got, tt.wantEntry)
			}
		})
	}
}

// install-cni, then --uninstall (the DaemonSet's preStop): the primary's
// bytes come back, the binaries stay for the DEL of running pods.
func TestInstallCNIUninstall(t *testing.T) {
	from, to, confDir, calico := installCNIDirs(t)
	base := []string{"--from", from, "--to", to, "--conf-dir", confDir}
	var out bytes.Buffer
	if err := installCNI(append(base, "--mode", "chained"), &out); err != nil {
		t.Fatal(err)
	}
	if err := installCNI(append(base, "--uninstall"), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "removed rail's entry from "+filepath.Join(confDir, "10-calico.conflist")) {
		t.Errorf("output %q", out.String())
	}
	got, _ := os.ReadFile(filepath.Join(confDir, "10-calico.conflist"))
	if !bytes.Equal(got, calico) {
		t.Fatalf("after uninstall:\n%s", got)
	}
	// The conflist, and the marker that stops a raild serve still running.
	if names, _ := os.ReadDir(confDir); len(names) != 2 || names[0].Name() != ".rail-uninstalled" {
		t.Fatalf("conf dir holds %v", names)
	}
	if _, err := os.Stat(filepath.Join(to, "rail")); err != nil {
		t.Fatalf("uninstall removed the binary: %v", err)
	}
	out.Reset()
	if err := installCNI(append(base, "--uninstall"), &out); err != nil || !strings.Contains(out.String(), "no conflist holds") {
		t.Fatalf("second uninstall: %v, %q", err, out.String())
	}
}
