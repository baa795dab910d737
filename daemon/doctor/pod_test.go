package doctor

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

func intPtr(i int) *int { return &i }

// failingReport is a RoCE pod whose port went down and whose container
// lost its memlock.
func failingReport() *api.PodReport {
	return &api.PodReport{
		Namespace: "ml", Name: "trainer", UID: "u1", Sandbox: "sb1",
		GPUs: []api.PodGPU{{Index: 0, PCI: "0000:1b:00.0"}, {Index: 1, PCI: "0000:1c:00.0"}},
		Interfaces: []api.PodInterface{{
			Name: "rail0", Network: "rail", Mode: api.ModeMacvlan, Addresses: []string{"192.168.50.7/24"},
			NIC:      &api.NIC{RDMADevice: "mlx5_0", Port: 1, LinkLayer: "Ethernet", Netdev: "eth2", PCI: "0000:1d:00.0"},
			Distance: "PIX", Reason: "closest ACTIVE NIC to GPU0",
			Distances: []api.GPUDistance{{GPU: 0, Class: "PIX", Chose: true}, {GPU: 1, Class: "PXB"}},
			PortState: "DOWN", GID: "::ffff:192.168.50.7", GIDIndex: intPtr(3),
		}},
		Containers: []api.PodContainer{{
			Name: "app", Pid: 4242, Injected: []string{"/dev/infiniband/uverbs0", "/dev/infiniband/rdma_cm"},
			Present: []string{"/dev/infiniband/uverbs0", "/dev/infiniband/rdma_cm"}, Memlock: "65536/65536 (soft/hard)",
			MemlockWanted: 1 << 40, Env: []string{"NCCL_IB_HCA==mlx5_0", "NCCL_IB_GID_INDEX=3"},
		}},
		Checks: []api.ReadinessCheck{
			{Name: "interface", Subject: "rail0", Status: api.CheckPass, Message: "rail0 is in the pod and up (up)"},
			{Name: "port", Subject: "rail0", Status: api.CheckFail, Reason: "PortNotActive", Message: "mlx5_0 port 1 is DOWN, want ACTIVE", Fix: "check the cable"},
			{Name: "memlock", Subject: "container app", Status: api.CheckFail, Reason: "MemlockTooLow", Message: "too low", Fix: "raise it"},
		},
	}
}

func TestWritePodReport(t *testing.T) {
	tests := []struct {
		name   string
		report func() *api.PodReport
		want   []string // lines, in this order
	}{
		{name: "failing", report: failingReport, want: []string{
			"pod ml/trainer (uid u1, sandbox sb1)",
			"rail.dev/RDMAReady: False (PortNotActive: rail0: mlx5_0 port 1 is DOWN, want ACTIVE)",
			"GPUs (as placement saw them): GPU0 0000:1b:00.0, GPU1 0000:1c:00.0",
			"interfaces:",
			"  rail0  mode macvlan  mlx5_0 port 1 (Ethernet, netdev eth2, pci 0000:1d:00.0)  192.168.50.7/24",
			"    network rail",
			"    placed: PIX closest ACTIVE NIC to GPU0",
			"    distance to each GPU: GPU0 PIX (chose it), GPU1 PXB",
			"    port DOWN; GID index 3: ::ffff:192.168.50.7",
			"containers (read from their own /proc/<pid>):",
			"  app (pid 4242)",
			"    device nodes injected: /dev/infiniband/uverbs0, /dev/infiniband/rdma_cm",
			"    device nodes present:  /dev/infiniband/uverbs0, /dev/infiniband/rdma_cm",
			"    memlock: 65536/65536 (soft/hard) (raild set 1099511627776)",
			"    NCCL/UCX env: NCCL_IB_HCA==mlx5_0 NCCL_IB_GID_INDEX=3",
			"checks:",
			"  [PASS] rail0 interface: rail0 is in the pod and up (up)",
			"  [FAIL] rail0 port: mlx5_0 port 1 is DOWN, want ACTIVE — fix: check the cable",
			"  [FAIL] container app memlock: too low — fix: raise it",
		}},
		{name: "after a restart: no placement, no containers", report: func() *api.PodReport {
			return &api.PodReport{Namespace: "ml", Name: "p", Sandbox: "sb2", Ready: true,
				Interfaces: []api.PodInterface{{Name: "rail0", Mode: api.ModeMove, NIC: &api.NIC{RDMADevice: "mlx5_2"},
					Addresses: []string{"10.0.0.2/24"}, PortState: "ACTIVE", ExclusiveRDMA: true}},
				Checks: []api.ReadinessCheck{{Name: "port", Subject: "rail0", Status: api.CheckPass, Message: "mlx5_2 port 1 is ACTIVE"}}}
		}, want: []string{
			"pod ml/p (uid none, sandbox sb2)",
			"rail.dev/RDMAReady: True",
			"GPUs: none known to placement (raild restarted since the ADD, or the pod holds none)",
			"interfaces:",
			"  rail0  mode move  mlx5_2 port 1  10.0.0.2/24",
			"    port ACTIVE; GID: -; RDMA device in the pod's netns (exclusive mode)",
			"checks:",
			"  [PASS] rail0 port: mlx5_2 port 1 is ACTIVE",
		}},
		{name: "a NIC from a dra.net claim", report: func() *api.PodReport {
			return &api.PodReport{Namespace: "ml", Name: "dranet", UID: "u3", Sandbox: "sb3",
				GPUs: []api.PodGPU{{Index: 2, PCI: "0000:22:00.0"}}, GPUSource: "the kubelet's PodResources (device plugin or DRA claims)",
				Interfaces: []api.PodInterface{{Name: "eth1", NIC: &api.NIC{RDMADevice: "mlx5_1", Port: 1, LinkLayer: "Ethernet", Netdev: "eth1", PCI: "0000:31:00.0"},
					Addresses: []string{"10.56.0.5"}, PortState: "ACTIVE", GID: "::ffff:10.56.0.5", GIDIndex: intPtr(1),
					DRA: &api.PodDRAClaim{Driver: "dra.net", Claim: "ml/rdma", Device: "dra.net/node-a/pci-0000-31-00-0"}}},
				Containers: []api.PodContainer{{Name: "app", Pid: 9, DriverInjected: []string{"/dev/infiniband/uverbs1"},
					Present: []string{"/dev/infiniband/uverbs1"}, Memlock: "unlimited/unlimited (soft/hard)", MemlockWanted: 1 << 40}},
				Ready:  true,
				Checks: []api.ReadinessCheck{{Name: "device-nodes", Subject: "container app", Status: api.CheckPass, Message: "container app holds /dev/infiniband/uverbs1"}}}
		}, want: []string{
			"pod ml/dranet (uid u3, sandbox sb3)",
			"rail.dev/RDMAReady: True",
			"GPUs (from the kubelet's PodResources (device plugin or DRA claims)): GPU2 0000:22:00.0",
			"interfaces:",
			"  eth1  from DRA claim ml/rdma (driver dra.net)  mlx5_1 port 1 (Ethernet, netdev eth1, pci 0000:31:00.0)  10.56.0.5",
			"    device dra.net/node-a/pci-0000-31-00-0: moved into the pod by its driver; raild only completes and checks it",
			"    port ACTIVE; GID index 1: ::ffff:10.56.0.5",
			"containers (read from their own /proc/<pid>):",
			"  app (pid 9)",
			"    device nodes injected: none",
			"    device nodes its DRA claims' driver injects: /dev/infiniband/uverbs1",
			"    device nodes present:  /dev/infiniband/uverbs1",
			"    memlock: unlimited/unlimited (soft/hard) (raild set 1099511627776)",
			"    NCCL/UCX env: none",
			"checks:",
			"  [PASS] container app device-nodes: container app holds /dev/infiniband/uverbs1",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			writePodReport(&buf, tt.report())
			got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// standIn serves GET /v1/pods/ml/trainer with report on a unix socket.
func standIn(t *testing.T, report *api.PodReport) string {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "raild.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/pods/ml/trainer", func(w http.ResponseWriter, _ *http.Request) { _ = json.NewEncoder(w).Encode(report) })
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return socket
}

func TestPodDoctor(t *testing.T) {
	ready := failingReport()
	ready.Ready, ready.Checks = true, ready.Checks[:1]
	tests := []struct {
		name   string
		pod    string
		json   bool
		report *api.PodReport
		err    string
		outHas string
	}{
		{name: "text, failing", pod: "ml/trainer", report: failingReport(), err: "not ready", outHas: "[FAIL] rail0 port"},
		{name: "json, ready", pod: "ml/trainer", json: true, report: ready, outHas: `"portState": "DOWN"`},
		{name: "unknown pod", pod: "ml/other", report: ready, err: "ask raild"},
		{name: "bad name", pod: "trainer", report: ready, err: `--pod "trainer": want NAMESPACE/NAME`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			socket := standIn(t, tt.report)
			var out bytes.Buffer
			err := podDoctor(&out, socket, tt.pod, tt.json)
			if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("err %v, want %q", err, tt.err)
			}
			if !strings.Contains(out.String(), tt.outHas) {
				t.Fatalf("output lacks %q:\n%s", tt.outHas, out.String())
			}
			if tt.json {
				var back api.PodReport
				if err := json.Unmarshal(out.Bytes(), &back); err != nil || back.Name != "trainer" || len(back.Containers) != 1 {
					t.Fatalf("JSON does not read back: %v %+v", err, back)
				}
			}
		})
	}
}
