package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
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
		check   func(t *testing.T, path string) // after Listen, success or not
	}{
		{name: "fresh directory", prepare: func(*testing.T, string) {}, check: func(t *testing.T, path string) {
			wantMode(t, filepath.Dir(path), os.ModeDir|0o700)
		}},
		{name: "existing readable dir is kept as is", prepare: func(t *testing.T, path string) {
			mkdir(t, filepath.Dir(path), 0o755)
		}, check: func(t *testing.T, path string) { wantMode(t, filepath.Dir(path), os.ModeDir|0o755) }},
		{name: "stale socket replaced", prepare: func(t *testing.T, path string) {
			mkdir(t, filepath.Dir(path), 0o700)
			ln, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			ln.Close() // the file stays; nobody listens on it
		}},
		{name: "regular file left alone", prepare: func(t *testing.T, path string) {
			mkdir(t, filepath.Dir(path), 0o700)
			if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "exists and is not a socket", check: func(t *testing.T, path string) {
			if data, err := os.ReadFile(path); err != nil || string(data) != "precious" {
				t.Errorf("file at the socket path = %q, %v; want it untouched", data, err)
			}
		}},
		{name: "directory left alone", prepare: func(t *testing.T, path string) {
			mkdir(t, path, 0o700)
		}, wantErr: "exists and is not a socket", check: func(t *testing.T, path string) { wantMode(t, path, os.ModeDir|0o700) }},
		{name: "symlink left alone", prepare: func(t *testing.T, path string) {
			mkdir(t, filepath.Dir(path), 0o700)
			if err := os.Symlink("/dev/null", path); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "exists and is not a socket"},
		{name: "live socket refused with the holder's pid", prepare: func(t *testing.T, path string) {
			mkdir(t, filepath.Dir(path), 0o700)
			ln, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
		}, wantErr: fmt.Sprintf("another raild is serving on it (pid %d)", os.Getpid()), check: func(t *testing.T, path string) {
			conn, err := net.Dial("unix", path)
			if err != nil {
				t.Fatalf("the live socket no longer answers: %v", err)
			}
			conn.Close()
		}},
		{name: "parent is a file", prepare: func(t *testing.T, path string) {
			if err := os.WriteFile(filepath.Dir(path), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "socket dir"},
		{name: "dir writable by others", prepare: func(t *testing.T, path string) {
			mkdir(t, filepath.Dir(path), 0o777)
		}, wantErr: "lets group or others replace the socket", check: func(t *testing.T, path string) {
			wantMode(t, filepath.Dir(path), os.ModeDir|0o777)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run", "raild.sock")
			tt.prepare(t, path)
			ln, err := Listen(path)
			if tt.check != nil {
				defer tt.check(t, path)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Listen = %v, want an error mentioning %q", err, tt.wantErr)
				}
				wantNoLeftovers(t, path)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			wantMode(t, path, os.ModeSocket|0o600)
			wantNoLeftovers(t, path)
			conn, err := net.Dial("unix", path)
			if err != nil {
				t.Fatalf("dial the new socket: %v", err)
			}
			conn.Close()
		})
	}
}

// TestSocketClose: Close removes the socket file only while it is still
// the listener's own.
func TestSocketClose(t *testing.T) {
	for _, replaced := range []bool{false, true} {
		t.Run(fmt.Sprint("replaced=", replaced), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "raild.sock")
			ln, err := Listen(path)
			if err != nil {
				t.Fatal(err)
			}
			if replaced {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte("other"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := ln.Close(); err != nil {
				t.Fatal(err)
			}
			_, err = os.Lstat(path)
			if exists := err == nil; exists != replaced {
				t.Fatalf("after Close: path exists = %v, want %v", exists, replaced)
			}
		})
	}
}

func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&(os.ModeType|os.ModePerm) != want {
		t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
	}
}

// wantNoLeftovers checks Listen left no private bind directory behind.
func wantNoLeftovers(t *testing.T, path string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".r") {
			t.Errorf("left behind %s", filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
}

func TestListShapes(t *testing.T) {
	f := startServer(t)
	if status, body := f.do(t, "GET", "/v1/leases", ""); status != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("leases with none held = %d %s, want 200 []", status, body)
	}
	_, err := f.client.Allocate(context.Background(), api.AllocateRequest{Sandbox: "pod1", CNIIfName: "eth0", Network: "n",
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
			if l["sandbox"] != "pod1" || l["podIfName"] != "rail0" || l["pool"] != "p" || l["network"] != "n" {
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
