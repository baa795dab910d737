package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

func TestListen(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string) // makes what is at path before Listen
		wantErr string
	}{
		{name: "fresh directory", prepare: func(*testing.T, string) {}},
		{name: "stale socket file replaced", prepare: func(t *testing.T, path string) {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "parent is a file", prepare: func(t *testing.T, path string) {
			if err := os.WriteFile(filepath.Dir(path), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "socket dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run", "raild.sock")
			tt.prepare(t, path)
			ln, err := Listen(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Listen = %v, want an error mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
				t.Fatalf("socket mode = %v, want a socket with 0600", fi.Mode())
			}
			dir, err := os.Stat(filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			if dir.Mode().Perm()&0o077 != 0 {
				t.Fatalf("socket dir mode = %v, want no access for group and others", dir.Mode())
			}
		})
	}
}

func TestListShapes(t *testing.T) {
	f := startServer(t)
	if status, body := f.do(t, "GET", "/v1/leases", ""); status != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("leases with none held = %d %s, want 200 []", status, body)
	}
	_, err := f.client.Allocate(context.Background(), api.AllocateRequest{Sandbox: "pod1", IfName: "eth0", Network: "n",
		Mode: api.ModeMove, Chained: true, Pool: "p", Annotations: map[string]string{api.AnnotationGPUs: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path  string
		check func(t *testing.T, body []byte)
	}{
		{path: "/v1/leases", check: func(t *testing.T, body []byte) {
			var leases []map[string]any
			mustDecode(t, body, &leases)
			if len(leases) != 1 {
				t.Fatalf("leases = %s, want one", body)
			}
			l := leases[0]
			if l["sandbox"] != "pod1" || l["ifname"] != "rail0" || l["pool"] != "p" || l["network"] != "n" {
				t.Errorf("lease keys = %v", l)
			}
			if addr, err := netip.ParsePrefix(str(l["address"])); err != nil || addr.Bits() != 24 ||
				!netip.MustParsePrefix("10.9.0.0/24").Contains(addr.Addr()) {
				t.Errorf("address %v: want CIDR form inside 10.9.0.0/24 (%v)", l["address"], err)
			}
			if nics, ok := l["nics"].([]any); !ok || len(nics) != 1 || nics[0] != "mlx5_0" {
				t.Errorf("nics = %v, want [mlx5_0]", l["nics"])
			}
		}},
		{path: "/v1/pools", check: func(t *testing.T, body []byte) {
			var pools []api.PoolStatus
			mustDecode(t, body, &pools)
			if len(pools) != 2 || pools[0].Name != "p" || pools[0].Subnet != "10.9.0.0/24" || pools[0].Used != 1 ||
				pools[0].Free != pools[0].Size-1 || pools[1].Name != "tiny" || pools[1].Size != 2 {
				t.Fatalf("pools = %+v", pools)
			}
		}},
		{path: "/v1/topology", check: func(t *testing.T, body []byte) {
			var report topology.Report
			mustDecode(t, body, &report)
			if len(report.GPUs) != 8 || len(report.NICs) < 4 || len(report.Matrix) != 8 || len(report.Affinity) == 0 {
				t.Fatalf("topology = %d GPUs, %d NICs, %d matrix rows, affinity %v", len(report.GPUs), len(report.NICs),
					len(report.Matrix), report.Affinity)
			}
		}},
		{path: "/v1/status", check: func(t *testing.T, body []byte) {
			var st map[string]any
			mustDecode(t, body, &st)
			if st["healthy"] != true {
				t.Errorf("status = %s, want healthy", body)
			}
			if pools, ok := st["pools"].([]any); !ok || len(pools) != 2 {
				t.Errorf("status pools = %v, want both pools", st["pools"])
			}
		}},
		{path: "/v1/status?pool=tiny", check: func(t *testing.T, body []byte) {
			var st api.Status
			mustDecode(t, body, &st)
			if !st.Healthy || len(st.Pools) != 1 || st.Pools[0].Name != "tiny" {
				t.Errorf("status of tiny = %+v", st)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, body := f.do(t, "GET", tt.path, "")
			if status != 200 {
				t.Fatalf("status = %d: %s", status, body)
			}
			tt.check(t, body)
		})
	}
}

func mustDecode(t *testing.T, body []byte, into any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(into); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// TestClientRoundTrip drives every call of api.Client against the server, in order.
