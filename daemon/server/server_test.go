package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
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
	svc    *service.Service
	server *Server
}

// testPools are the pools of the test node.
func testPools(t *testing.T) *ipam.Pools {
	t.Helper()
	pools, err := ipam.NewPools([]ipam.PoolConfig{
		{Name: "p", Subnet: "10.9.0.0/24"}, {Name: "tiny", Subnet: "10.8.0.0/30"},
	}, "node1")
	if err != nil {
		t.Fatal(err)
	}
	return pools
}

func startServer(t *testing.T) *fixture {
	t.Helper()
	return startServerReporting(t, nil)
}

// startServerReporting is startServer answering GET /v1/pods from reports.
func startServerReporting(t *testing.T, reports PodReports) *fixture {
	t.Helper()
	alloc, err := ipam.Open(filepath.Join(t.TempDir(), "leases.db"), testPools(t), ipam.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alloc.Close() })
	return startServerWith(t, alloc, reports)
}

// startServerWith serves a service on alloc.
func startServerWith(t *testing.T, alloc *ipam.Allocator, reports PodReports) *fixture {
	t.Helper()
	root := t.TempDir()
	if _, err := fakesys.Write(root, "h100x8-cx7x4", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	machine, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Options{Machine: func() *topology.Machine { return machine }, Rails: map[string]int{}, Alloc: alloc})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(svc, nil, reports, slog.New(slog.DiscardHandler))
	socket := serveTest(t, srv)
	transport := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}
	t.Cleanup(transport.CloseIdleConnections)
	return &fixture{socket: socket, raw: &http.Client{Transport: transport, Timeout: 10 * time.Second},
		client: api.NewClient(socket, 10*time.Second), svc: svc, server: srv}
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
			wantStatus: 400, wantCode: api.CodeUnsupportedField, wantText: []string{`"selector.nic"`}},
		{name: "key in the wrong case", method: "POST", path: "/v1/allocate",
			body:       `{"sandbox":"sb6","ifName":"net1","network":"n","MODE":"ipam"}`,
			wantStatus: 400, wantCode: api.CodeUnsupportedField, wantText: []string{`"MODE"`, `write "mode"`}},
		{name: "capitalised key on release", method: "POST", path: "/v1/release",
			body:       `{"Sandbox":"sb1","ifName":"net1","network":"n"}`,
			wantStatus: 400, wantCode: api.CodeUnsupportedField, wantText: []string{`"Sandbox"`, `write "sandbox"`}},
		{name: "key given twice", method: "POST", path: "/v1/release",
			body:       `{"sandbox":"sb1","sandbox":"sb2","ifName":"net1","network":"n"}`,
			wantStatus: 400, wantCode: api.CodeDecode, wantText: []string{`"sandbox"`, "twice"}},
		{name: "trailing data", method: "POST", path: "/v1/release",
			body:       `{"sandbox":"sb1","ifName":"net1","network":"n"} {}`,
			wantStatus: 400, wantCode: api.CodeDecode, wantText: []string{"trailing data"}},
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
