package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/service"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// fixture is a real service on a fake H100 node, served on a unix socket.
type fixture struct {
	socket string
	raw    *http.Client // speaks HTTP on the socket, for hand-made requests
	client *api.Client
}

func startServer(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	if _, err := fakesys.Write(root, "h100x8-cx7x4", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	machine, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	pools, err := ipam.NewPools([]ipam.PoolConfig{
		{Name: "p", Subnet: "10.9.0.0/24"}, {Name: "tiny", Subnet: "10.8.0.0/30"},
	}, "node1")
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := ipam.Open(filepath.Join(t.TempDir(), "leases.db"), pools, ipam.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alloc.Close() })
	svc, err := service.New(service.Options{Machine: machine, Rails: map[string]int{}, Alloc: alloc,
		GPUResources: []string{"nvidia.com/gpu"}})
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(t.TempDir(), "run", "raild.sock")
	ln, err := Listen(socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := New(svc, nil, slog.New(slog.DiscardHandler))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	transport := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}
	t.Cleanup(transport.CloseIdleConnections)
	return &fixture{socket: socket, raw: &http.Client{Transport: transport, Timeout: 10 * time.Second},
		client: api.NewClient(socket, 10*time.Second)}
}

// do sends one hand-made request and returns the status and body.
func (f *fixture) do(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://raild"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.raw.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

func allocBody(fields string) string {
	return `{"sandbox":"sb1","ifName":"net1","network":"n","mode":"ipam","pool":"p"` + fields + `}`
}

func TestRequestValidation(t *testing.T) {
	f := startServer(t)
	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		wantStatus int
		wantCode   uint     // 0: success
		wantText   []string // each must appear in the error
	}{
		{name: "valid allocate", method: "POST", path: "/v1/allocate", body: allocBody(""), wantStatus: 200},
		{name: "ifName of exactly 15 bytes", method: "POST", path: "/v1/allocate",
			body: `{"sandbox":"sb2","ifName":"abcdefghijklmno","network":"n","mode":"ipam","pool":"p"}`, wantStatus: 200},
		{name: "unknown field in allocate", method: "POST", path: "/v1/allocate", body: allocBody(`,"gpuz":"0"`),
			wantStatus: 400, wantCode: api.CodeUnsupportedField, wantText: []string{`"gpuz"`, api.Version}},
		{name: "unknown field in release", method: "POST", path: "/v1/release",
			body:       `{"sandbox":"sb1","ifName":"net1","network":"n","pool":"p"}`,
			wantStatus: 400, wantCode: api.CodeUnsupportedField, wantText: []string{`"pool"`}},
		{name: "unknown nested field", method: "POST", path: "/v1/allocate", body: allocBody(`,"selector":{"nic":["mlx5_0"]}`),
			wantStatus: 400, wantCode: api.CodeUnsupportedField, wantText: []string{`"nic"`}},
		{name: "malformed JSON", method: "POST", path: "/v1/allocate", body: `{"sandbox":`,
			wantStatus: 400, wantCode: api.CodeDecode, wantText: []string{"invalid request"}},
		{name: "wrong type", method: "POST", path: "/v1/allocate", body: `{"sandbox":5}`,
			wantStatus: 400, wantCode: api.CodeDecode, wantText: []string{"sandbox", "string"}},
		{name: "empty body", method: "POST", path: "/v1/release", body: "",
			wantStatus: 400, wantCode: api.CodeDecode},
		{name: "body over 1 MiB", method: "POST", path: "/v1/allocate",
			body:       allocBody(`,"podName":"` + strings.Repeat("x", maxBody) + `"`),
			wantStatus: 400, wantCode: api.CodeDecode, wantText: []string{"1 MiB"}},
		{name: "empty sandbox", method: "POST", path: "/v1/allocate",
			body:       `{"sandbox":"","ifName":"net1","network":"n","mode":"ipam"}`,
			wantStatus: 400, wantCode: api.CodeInvalidConfig, wantText: []string{`"sandbox"`, "CNI_CONTAINERID"}},
		{name: "empty sandbox on release", method: "POST", path: "/v1/release",
			body:       `{"sandbox":"","ifName":"net1","network":"n"}`,
			wantStatus: 400, wantCode: api.CodeInvalidConfig, wantText: []string{`"sandbox"`}},
		{name: "interface name of 16 bytes", method: "POST", path: "/v1/allocate",
			body:       `{"sandbox":"sb3","ifName":"abcdefghijklmnop","network":"n","mode":"ipam"}`,
			wantStatus: 400, wantCode: api.CodeInvalidConfig, wantText: []string{`"ifName"`, "15 bytes"}},
		{name: "sandbox over 256 bytes", method: "POST", path: "/v1/allocate",
			body:       `{"sandbox":"` + strings.Repeat("a", 257) + `","ifName":"net1","network":"n","mode":"ipam"}`,
			wantStatus: 400, wantCode: api.CodeInvalidConfig, wantText: []string{`"sandbox"`, "at most 256"}},
		{name: "interface name with a slash", method: "POST", path: "/v1/allocate",
			body:       `{"sandbox":"sb3","ifName":"net/1","network":"n","mode":"ipam"}`,
			wantStatus: 400, wantCode: api.CodeInvalidConfig, wantText: []string{`"ifName"`, "'/'"}},
		{name: "unknown pool", method: "POST", path: "/v1/allocate",
			body:       `{"sandbox":"sb4","ifName":"net1","network":"n","mode":"ipam","pool":"nope"}`,
			wantStatus: 400, wantCode: api.CodeInvalidConfig, wantText: []string{"pool", `"nope"`, "pools: p, tiny"}},
		{name: "unknown pool by annotation", method: "POST", path: "/v1/allocate",
			body:       `{"sandbox":"sb4","ifName":"net1","network":"n","mode":"ipam","annotations":{"rail.dev/pool":"nope"}}`,
			wantStatus: 400, wantCode: api.CodeInvalidConfig, wantText: []string{api.AnnotationPool, `"nope"`}},
		{name: "unknown mode", method: "POST", path: "/v1/allocate",
			body:       `{"sandbox":"sb5","ifName":"net1","network":"n","mode":"bridge"}`,
			wantStatus: 400, wantCode: api.CodeInvalidConfig, wantText: []string{`"mode"`, "macvlan"}},
		{name: "status of unknown pool", method: "GET", path: "/v1/status?pool=nope",
			wantStatus: 400, wantCode: api.CodeInvalidConfig, wantText: []string{`"nope"`}},
		{name: "gc without network", method: "POST", path: "/v1/gc", body: `{"valid":[]}`,
			wantStatus: 400, wantCode: api.CodeInvalidConfig, wantText: []string{`"network"`}},
		{name: "check of unknown attachment", method: "POST", path: "/v1/check",
			body:       `{"sandbox":"ghost","ifName":"net1","network":"n"}`,
			wantStatus: 404, wantCode: api.CodeUnknownContainer, wantText: []string{"ghost"}},
		{name: "release of unknown attachment", method: "POST", path: "/v1/release",
			body: `{"sandbox":"ghost","ifName":"net1","network":"n"}`, wantStatus: 200},
		{name: "wrong method", method: "GET", path: "/v1/allocate",
			wantStatus: 400, wantCode: api.CodeIncompatibleVersion, wantText: []string{"GET /v1/allocate", api.Version}},
		{name: "wrong method on a list", method: "DELETE", path: "/v1/leases",
			wantStatus: 400, wantCode: api.CodeIncompatibleVersion, wantText: []string{"DELETE /v1/leases"}},
		{name: "unknown version", method: "POST", path: "/v2/allocate", body: allocBody(""),
			wantStatus: 400, wantCode: api.CodeIncompatibleVersion, wantText: []string{"/v2/allocate", "upgrade"}},
		{name: "unknown call", method: "GET", path: "/v1/nope",
			wantStatus: 400, wantCode: api.CodeIncompatibleVersion, wantText: []string{"/v1/nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.do(t, tt.method, tt.path, tt.body)
			if status != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", status, tt.wantStatus, body)
			}
			if tt.wantCode == 0 {
				return
			}
			var apiErr api.Error
			if err := json.Unmarshal(body, &apiErr); err != nil {
				t.Fatalf("error body is not an api.Error: %v: %s", err, body)
			}
			if apiErr.Code != tt.wantCode || apiErr.Msg == "" {
				t.Fatalf("error = %+v, want code %d with a message", apiErr, tt.wantCode)
			}
			for _, want := range tt.wantText {
				if !strings.Contains(apiErr.Error(), want) {
					t.Errorf("error %q does not mention %q", apiErr.Error(), want)
				}
			}
		})
	}
	leases, err := f.client.Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(leases) != 2 {
		t.Fatalf("only the two valid allocations may leave leases, got %+v", leases)
	}
}

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
func TestClientRoundTrip(t *testing.T) {
	f := startServer(t)
	ctx := context.Background()
	c := f.client
	key := func(sb string) api.AttachmentRequest {
		return api.AttachmentRequest{Sandbox: sb, IfName: "net1", Network: "n"}
	}
	alloc := func(sb, pool string) (string, error) {
		plan, err := c.Allocate(ctx, api.AllocateRequest{Sandbox: sb, IfName: "net1", Network: "n", Mode: api.ModeIPAM, Pool: pool})
		if err != nil {
			return "", err
		}
		if len(plan.Interfaces) != 1 || len(plan.Interfaces[0].Addresses) != 1 || plan.Interfaces[0].NIC != nil {
			return "", errors.New("ipam plan is not one interface with one address and no NIC")
		}
		return plan.Interfaces[0].Addresses[0].CIDR, nil
	}
	addrs := map[string]string{}
	steps := []struct {
		name string
		run  func() error
	}{
		{"allocate a", func() (err error) { addrs["a"], err = alloc("a", "p"); return err }},
		{"allocate a again gives the same address", func() error {
			got, err := alloc("a", "p")
			return sameAddr(got, err, addrs["a"])
		}},
		{"check a", func() error {
			plan, err := c.Check(ctx, key("a"))
			if err != nil {
				return err
			}
			return sameAddr(plan.Interfaces[0].Addresses[0].CIDR, nil, addrs["a"])
		}},
		{"allocate b gets another address", func() (err error) {
			if addrs["b"], err = alloc("b", "p"); err == nil && addrs["b"] == addrs["a"] {
				err = errors.New("b got a's address " + addrs["a"])
			}
			return err
		}},
		{"fill tiny", func() error {
			_, err1 := alloc("t1", "tiny")
			_, err2 := alloc("t2", "tiny")
			return errors.Join(err1, err2)
		}},
		{"tiny is exhausted", func() error {
			_, err := alloc("t3", "tiny")
			return wantCode(err, api.CodePoolExhausted)
		}},
		{"status says tiny is full", func() error {
			st, err := c.Status(ctx, "")
			if err != nil {
				return err
			}
			if st.Healthy || !strings.Contains(st.Reason, "tiny") {
				return errors.New("status does not report tiny exhausted: " + st.Reason)
			}
			return nil
		}},
		{"status of p is healthy", func() error {
			st, err := c.Status(ctx, "p")
			if err != nil || !st.Healthy || len(st.Pools) != 1 || st.Pools[0].Used != 2 {
				return errors.Join(err, errors.New("status of p is not healthy with 2 used"))
			}
			return nil
		}},
		{"leases and pools", func() error {
			leases, err := c.Leases(ctx)
			pools, err2 := c.Pools(ctx)
			if err := errors.Join(err, err2); err != nil {
				return err
			}
			if len(leases) != 4 || len(pools) != 2 || pools[1].Used != 2 || pools[1].Free != 0 {
				return errors.New("want 4 leases and tiny full")
			}
			return nil
		}},
		{"topology", func() error {
			raw, err := c.Topology(ctx)
			var report topology.Report
			if err == nil {
				err = json.Unmarshal(raw, &report)
			}
			if err == nil && len(report.GPUs) != 8 {
				err = errors.New("topology lacks the 8 GPUs")
			}
			return err
		}},
		{"gc keeps a and frees the rest", func() error {
			res, err := c.GC(ctx, api.GCRequest{Network: "n", Valid: []api.Attachment{{Sandbox: "a", IfName: "net1"}}})
			if err == nil && len(res.Released) != 3 {
				err = errors.New("gc released other than b, t1, t2")
			}
			return err
		}},
		{"release a", func() error { return c.Release(ctx, key("a")) }},
		{"release a again is fine", func() error { return c.Release(ctx, key("a")) }},
		{"check a after release", func() error {
			_, err := c.Check(ctx, key("a"))
			return wantCode(err, api.CodeUnknownContainer)
		}},
		{"no lease left", func() error {
			leases, err := c.Leases(ctx)
			if err == nil && len(leases) != 0 {
				err = errors.New("leases left after gc and release")
			}
			return err
		}},
	}
	for _, step := range steps {
		if err := step.run(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
	}
}

func sameAddr(got string, err error, want string) error {
	if err == nil && got != want {
		err = fmt.Errorf("address %s, want %s", got, want)
	}
	return err
}

func wantCode(err error, code uint) error {
	if !api.IsCode(err, code) {
		return fmt.Errorf("got %v, want a raild error with code %d", err, code)
	}
	return nil
}
