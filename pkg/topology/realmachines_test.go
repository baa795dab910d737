package topology_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// discoverWith writes a built-in machine and discovers it, with the ND
// H100 v5 topology file when file is set.
func discoverWith(t *testing.T, machine string, file bool) (*topology.Machine, error) {
	t.Helper()
	var opt topology.Options
	if file {
		opt.TopologyFile = ndv5File(t)
	}
	root := t.TempDir()
	if _, err := fakesys.Write(root, machine, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	return topology.DiscoverWith(root, opt)
}

func ndv5File(t *testing.T) *topology.TopoFile {
	t.Helper()
	f, err := topology.ReadTopoFile("testdata/ndv5-topo.xml")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// matrixRows renders a report's matrix as "GPU0 PIX SYS …" rows in NIC order.
func matrixRows(r topology.Report) []string {
	var rows []string
	for _, g := range r.GPUs {
		row := []string{"GPU" + strconv.Itoa(g.Index)}
		for _, n := range r.NICs {
			row = append(row, r.Matrix[strconv.Itoa(g.Index)][n.Name].String())
		}
		rows = append(rows, strings.Join(row, " "))
	}
	return rows
}

// TestRealMachines checks `raild topo`'s matrix, sources and affinity for
// machines whose sysfs hides or bends the PCIe tree against matrices
// computed by hand from their layouts (fakesys machines.go).
func TestRealMachines(t *testing.T) {
	tests := []struct {
		name, machine string
		file          bool
		rows          []string // hand-computed, NIC order as discovered
		source        topology.Source
		affinity      string // "GPU→NIC …" in GPU order
		flat          bool
		disagreements int
	}{
		{name: "XE8640-like: one GPU shares a switch", machine: "xe8640",
			rows: []string{
				"GPU0 PIX SYS",  // same switch as mlx5_0
				"GPU1 NODE SYS", // other host bridge of socket 0
				"GPU2 SYS NODE", // own host bridge of socket 1
				"GPU3 SYS PHB",  // mlx5_1 on another root port of its host bridge
			},
			source: topology.SourceSysfs, affinity: "0>mlx5_0 1>mlx5_0 2>mlx5_1 3>mlx5_1"},
		{name: "GB200 tray: C2C GPUs placed by socket", machine: "gb200-tray",
			rows: []string{
				"GPU0 P2C P2C SYS SYS",
				"GPU1 P2C P2C SYS SYS",
				"GPU2 SYS SYS P2C P2C",
				"GPU3 SYS SYS P2C P2C",
			},
			source: topology.SourceSocket, affinity: "0>mlx5_0 1>mlx5_1 2>mlx5_2 3>mlx5_3"},
		{name: "ND H100 v5 without its file: NUMA only", machine: "azure-ndh100v5", flat: true,
			rows: []string{
				"GPU0 NODE NODE NODE NODE SYS SYS SYS SYS",
				"GPU1 NODE NODE NODE NODE SYS SYS SYS SYS",
				"GPU2 NODE NODE NODE NODE SYS SYS SYS SYS",
				"GPU3 NODE NODE NODE NODE SYS SYS SYS SYS",
				"GPU4 SYS SYS SYS SYS NODE NODE NODE NODE",
				"GPU5 SYS SYS SYS SYS NODE NODE NODE NODE",
				"GPU6 SYS SYS SYS SYS NODE NODE NODE NODE",
				"GPU7 SYS SYS SYS SYS NODE NODE NODE NODE",
			},
			source: topology.SourceNUMA},
		{name: "ND H100 v5 with its NCCL topology file", machine: "azure-ndh100v5", file: true, flat: true,
			rows: []string{
				"GPU0 PIX PHB PHB PHB SYS SYS SYS SYS",
				"GPU1 PHB PIX PHB PHB SYS SYS SYS SYS",
				"GPU2 PHB PHB PIX PHB SYS SYS SYS SYS",
				"GPU3 PHB PHB PHB PIX SYS SYS SYS SYS",
				"GPU4 SYS SYS SYS SYS PIX PHB PHB PHB",
				"GPU5 SYS SYS SYS SYS PHB PIX PHB PHB",
				"GPU6 SYS SYS SYS SYS PHB PHB PIX PHB",
				"GPU7 SYS SYS SYS SYS PHB PHB PHB PIX",
			},
			source: topology.SourceFile, disagreements: 32, // the 32 same-socket pairs: file PIX/PHB, sysfs NODE
			affinity: "0>mlx5_ib0 1>mlx5_ib1 2>mlx5_ib2 3>mlx5_ib3 4>mlx5_ib4 5>mlx5_ib5 6>mlx5_ib6 7>mlx5_ib7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := discoverWith(t, tt.machine, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			r := m.Report()
			if got := matrixRows(r); strings.Join(got, "\n") != strings.Join(tt.rows, "\n") {
				t.Errorf("matrix:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.rows, "\n"))
			}
			for gpu, row := range r.Sources {
				for nic, src := range row {
					if src != tt.source {
						t.Errorf("GPU%s–%s from %q, want %q", gpu, nic, src, tt.source)
					}
				}
			}
			if tt.affinity != "" {
				var aff []string
				for _, g := range r.GPUs {
					aff = append(aff, strconv.Itoa(g.Index)+">"+r.Affinity[strconv.Itoa(g.Index)])
				}
				if got := strings.Join(aff, " "); got != tt.affinity {
					t.Errorf("affinity %s, want %s", got, tt.affinity)
				}
			}
			if r.FlatPCI != tt.flat || len(r.Disagreements) != tt.disagreements {
				t.Errorf("flatPCI %v with %d disagreements, want %v with %d", r.FlatPCI, len(r.Disagreements), tt.flat, tt.disagreements)
			}
			FlatPCIProblem := false
			for _, p := range r.Problems {
				FlatPCIProblem = FlatPCIProblem || strings.Contains(p.Reason, "sysfs carries no switch information")
			}
			if want := tt.flat && !tt.file; FlatPCIProblem != want {
				t.Errorf("flat-PCI problem reported %v, want %v (%v)", FlatPCIProblem, want, r.Problems)
			}
			var text strings.Builder
			if err := topology.WriteText(&text, r); err != nil {
				t.Fatal(err)
			}
			wantLine := map[topology.Source]string{topology.SourceFile: "from the NCCL topology file testdata/ndv5-topo.xml",
				topology.SourceSocket: "from CPU sockets", topology.SourceNUMA: "from NUMA nodes", topology.SourceSysfs: "from sysfs's PCIe tree"}[tt.source]
			if !strings.Contains(text.String(), wantLine) {
				t.Errorf("topo text does not say %q:\n%s", wantLine, &text)
			}
		})
	}
}

// TestPlacementFollowsSocketsAndFile: a pod holding one GPU gets the NIC
// the topology says, not the first by name among equals (before: GB200's
// GPU2 got mlx5_0 across the sockets, ND H100 v5's GPU2 got mlx5_ib0).
func TestPlacementFollowsSocketsAndFile(t *testing.T) {
	tests := []struct {
		machine string
		file    bool
		gpu     int
		want    string
		class   topology.Class
	}{
		{"gb200-tray", false, 2, "mlx5_2", topology.P2C},
		{"gb200-tray", false, 1, "mlx5_0", topology.P2C},
		{"azure-ndh100v5", true, 2, "mlx5_ib2", topology.PIX},
		{"azure-ndh100v5", true, 6, "mlx5_ib6", topology.PIX},
		{"azure-ndh100v5", false, 6, "mlx5_ib4", topology.NODE}, // NUMA, then name: what the file fixes
		{"xe8640", false, 3, "mlx5_1", topology.PHB},
	}
	for _, tt := range tests {
		m, err := discoverWith(t, tt.machine, tt.file)
		if err != nil {
			t.Fatal(err)
		}
		choices, err := m.Select(topology.Request{GPUs: []int{tt.gpu}})
		if err != nil {
			t.Fatalf("%s GPU%d: %v", tt.machine, tt.gpu, err)
		}
		if len(choices) != 1 || choices[0].NIC != tt.want || choices[0].Class != tt.class {
			t.Errorf("%s (file %v) GPU%d got %+v, want %s %s", tt.machine, tt.file, tt.gpu, choices, tt.want, tt.class)
		}
		if tt.machine == "azure-ndh100v5" && !tt.file && !strings.Contains(choices[0].Reason, "ranked by NUMA node") {
			t.Errorf("reason %q does not say placement ranks by NUMA node", choices[0].Reason)
		}
	}
}

// TestTopoFileForAnotherMachine: a file naming devices the node lacks is
// an error that names them.
func TestTopoFileForAnotherMachine(t *testing.T) {
	_, err := discoverWith(t, "xe8640", true)
	if err == nil {
		t.Fatal("a file for another machine was accepted")
	}
	for _, want := range []string{"testdata/ndv5-topo.xml", "0001:00:00.0 (GPU)", "0108:00:00.0 (NIC)", "does not have"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q in it", err, want)
		}
	}
}

func TestParseTopoFileRefuses(t *testing.T) {
	tests := []struct {
		name, xml, want string
	}{
		{"not XML", "hello", "not NCCL topology XML"},
		{"wrong top element", `<topology/>`, "want <system>"},
		{"bad busid", `<system><cpu numaid="0"><pci busid="zz" class="0x030200"/></cpu></system>`, `busid="zz"`},
		{"duplicate", `<system><cpu numaid="0"><pci busid="0000:01:00.0" class="0x030200"/><pci busid="0000:01:00.0" class="0x020700"/></cpu></system>`, "appears twice"},
		{"no NIC", `<system><cpu numaid="0"><pci busid="0000:01:00.0" class="0x030200"/></cpu></system>`, "1 GPU(s) (PCI class 0x03…) and 0 NIC(s)"},
		{"nested too deep", deepTopo(9990), "deeper than"},
		{"nested past the bound by one", deepTopo(topology.MaxTopoDepth + 1), "deeper than"},
		{"too many elements", wideTopo(70000), "more than"},
		{"a second <system>", okTopo + `<system><cpu numaid="1"/></system>`, "second <system>"},
		{"another element after </system>", okTopo + `<cpu numaid="1"/>`, "<cpu> after </system>"},
		{"text after </system>", okTopo + "garbage", `text "garbage" after </system>`},
		{"unclosed", `<system><cpu numaid="0">`, "not NCCL topology XML"},
	}
	for _, tt := range tests {
		_, err := topology.ParseTopoFile([]byte(tt.xml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
	if _, err := topology.ReadTopoFile("testdata/missing.xml"); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	for _, ok := range []string{okTopo, okTopo + "\n<!-- trailing comment -->\n", "<?xml version=\"1.0\"?>\n" + okTopo + "\n",
		deepTopo(topology.MaxTopoDepth)} {
		if _, err := topology.ParseTopoFile([]byte(ok)); err != nil {
			t.Errorf("%.80q…: %v", ok, err)
		}
	}
}

// okTopo is the smallest file that places: one GPU and one NIC.
const okTopo = `<system version="1"><cpu numaid="0"><pci busid="0000:01:00.0" class="0x030200"/>` +
	`<pci busid="0000:02:00.0" class="0x020700"/></cpu></system>`

// deepTopo is a file whose GPU and NIC sit below a chain of bridges
// making the document depth elements deep (<system>, <cpu>, the bridges,
// the endpoints).
func deepTopo(depth int) string {
	var b strings.Builder
	b.WriteString(`<system><cpu numaid="0">`)
	bridges := depth - 3
	for i := range bridges {
		fmt.Fprintf(&b, `<pci busid="%04x:%02x:%02x.0" class="0x060400">`, 0x100+i/256, i%256, 1)
	}
	b.WriteString(`<pci busid="0000:01:00.0" class="0x030200"/><pci busid="0000:02:00.0" class="0x020700"/>`)
	for range bridges {
		b.WriteString(`</pci>`)
	}
	b.WriteString(`</cpu></system>`)
	return b.String()
}

// wideTopo is a file with n elements side by side.
func wideTopo(n int) string {
	return `<system><cpu numaid="0">` + strings.Repeat(`<nvlink/>`, n) +
		`<pci busid="0000:01:00.0" class="0x030200"/><pci busid="0000:02:00.0" class="0x020700"/></cpu></system>`
}

// TestReadTopoFileRefusesNonRegular: a FIFO, a socket, a device node or a
// folder named as the topology file is refused before it is read; the
// open never waits (a FIFO with no writer hung raild serve).
func TestReadTopoFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "topo.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "topo.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link.xml")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{fifo, "FIFO"}, {link, "FIFO"}, {sock, "socket"}, {"/dev/null", "device node"}, {dir, "directory"},
	} {
		_, err := topology.ReadTopoFile(tt.path)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("%s: %v; want an error naming it a %s", tt.path, err, tt.want)
		}
	}
}

// TestTopoFileDeclaresAGPUAsNIC: a file whose NIC is, on this node, a GPU
// (or the reverse) is refused naming the element.
func TestTopoFileDeclaresAGPUAsNIC(t *testing.T) {
	data, err := os.ReadFile("testdata/ndv5-topo.xml")
	if err != nil {
		t.Fatal(err)
	}
	swapped := strings.Replace(string(data), `<pci busid="0001:00:00.0" class="0x030200"`, `<pci busid="0001:00:00.0" class="0x020700"`, 1)
	swapped = strings.Replace(swapped, `<pci busid="0101:00:00.0" class="0x020700"`, `<pci busid="0101:00:00.0" class="0x030200"`, 1)
	file, err := topology.ParseTopoFile([]byte(swapped))
	if err != nil {
		t.Fatal(err)
	}
	file.Path = "swapped.xml"
	root := t.TempDir()
	if _, err := fakesys.Write(root, "azure-ndh100v5", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	_, err = topology.DiscoverWith(root, topology.Options{TopologyFile: file})
	for _, want := range []string{"swapped.xml", `<pci busid="0001:00:00.0">`, "GPU", `<pci busid="0101:00:00.0">`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q in it", err, want)
		}
	}
}
