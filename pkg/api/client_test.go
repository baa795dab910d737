package api

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// serve answers on a unix socket in a temp dir with handler.
func serve(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "raild.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return socket
}

func TestClientErrors(t *testing.T) {
	tests := []struct {
		name     string
		handler  http.HandlerFunc // nil: nothing listens
		timeout  time.Duration
		wantCode uint
		wantText string
	}{
		{name: "unreachable", wantCode: CodeTryAgainLater, wantText: "unreachable"},
		{name: "coded error passes through", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusConflict)
			json.NewEncoder(w).Encode(Error{Code: CodePoolExhausted, Msg: "pool exhausted", Details: "pool p: 254 of 254"})
		}, wantCode: CodePoolExhausted, wantText: "254 of 254"},
		{name: "garbage error body", handler: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, wantCode: CodeInternal, wantText: "500"},
		{name: "garbage success body", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte("{not json"))
		}, wantCode: CodeDecode},
		{name: "slow daemon", handler: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}, timeout: 50 * time.Millisecond, wantCode: CodeTryAgainLater, wantText: "did not answer"},
		{name: "stalls after the headers", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"sandbox":`))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}, timeout: 100 * time.Millisecond, wantCode: CodeTryAgainLater, wantText: "did not answer"},
		{name: "oversized error is cut", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(Error{Code: CodeInvalidConfig, Msg: "bad", Details: strings.Repeat("x", 1<<20)})
		}, wantCode: CodeInvalidConfig, wantText: "bytes in all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			socket := filepath.Join(t.TempDir(), "none.sock")
			if tt.handler != nil {
				socket = serve(t, tt.handler)
			}
			_, err := NewClient(socket, tt.timeout).Allocate(context.Background(), AllocateRequest{Sandbox: "s"})
			if !IsCode(err, tt.wantCode) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("got %v; want code %d mentioning %q", Excerpt(err.Error(), 300), tt.wantCode, tt.wantText)
			}
			if len(err.Error()) > MaxMsg+MaxDetails+200 {
				t.Fatalf("error of %d bytes: errors quote bounded excerpts", len(err.Error()))
			}
			if IsUnreachable(err) != (tt.wantCode == CodeTryAgainLater) {
				t.Fatalf("IsUnreachable = %v for %v", IsUnreachable(err), err)
			}
		})
	}
}

func TestClientRoundTrip(t *testing.T) {
	socket := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/allocate" || r.Method != http.MethodPost {
			http.Error(w, r.URL.Path, http.StatusNotFound)
			return
		}
		var req AllocateRequest
		json.NewDecoder(r.Body).Decode(&req)
		json.NewEncoder(w).Encode(Plan{Sandbox: req.Sandbox, CNIIfName: req.CNIIfName, Interfaces: []PlanInterface{{Name: "rail0"}}})
	})
	plan, err := NewClient(socket, 0).Allocate(context.Background(), AllocateRequest{Sandbox: "abc", CNIIfName: "eth0"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Sandbox != "abc" || plan.CNIIfName != "eth0" || len(plan.Interfaces) != 1 {
		t.Fatalf("plan = %+v", plan)
	}
}

func TestCNIArgsFlexible(t *testing.T) {
	tests := []struct {
		in       string
		gpus     string
		rail     int
		wantFail bool
	}{
		{in: `{"gpus":"0, 1","rail":2}`, gpus: "0,1", rail: 2},
		{in: `{"gpus":[0,"GPU-a"],"rail":"3"}`, gpus: "0,GPU-a", rail: 3},
		{in: `{"gpus":{"x":1}}`, wantFail: true},
		{in: `{"rail":"x"}`, wantFail: true},
		{in: `{"gpus":"0,,1"}`, wantFail: true},
	}
	for _, tt := range tests {
		var args CNIArgs
		err := json.Unmarshal([]byte(tt.in), &args)
		if tt.wantFail {
			if err == nil {
				t.Errorf("%s: want an error", tt.in)
			}
			continue
		}
		if err != nil || args.GPUs.String() != tt.gpus || int(*args.Rail) != tt.rail {
			t.Errorf("%s: got %v %v %v", tt.in, args.GPUs, args.Rail, err)
		}
	}
}

func TestSplitList(t *testing.T) {
	tests := []struct {
		value   string
		want    List
		wantErr string
	}{
		{value: "", want: nil},
		{value: "   ", want: nil},
		{value: "0", want: List{"0"}},
		{value: "0, 1,GPU-x", want: List{"0", "1", "GPU-x"}},
		{value: " GPU-a ,\tMIG-b ", want: List{"GPU-a", "MIG-b"}},
		{value: "0,,1", wantErr: "entry 2 is empty"},
		{value: "0,1,", wantErr: "entry 3 is empty"},
		{value: ",0", wantErr: "entry 1 is empty"},
		{value: " , ,", wantErr: "entry 1 is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, err := SplitList(tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.value) {
					t.Fatalf("SplitList(%q) = %q, %v; want an error naming the value and %q", tt.value, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("SplitList(%q) = %q, %v; want %q", tt.value, got, err, tt.want)
			}
		})
	}
}
