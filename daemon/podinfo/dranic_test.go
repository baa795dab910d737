package podinfo

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/railcni/rail/pkg/topology"
)

// nicTable stands in for NIC slices: device name -> attributes (nil: no RDMA).
type nicTable map[string]*NICAttributes

func (n nicTable) NICAttributes(_ context.Context, dev DRADevice) (NICAttributes, error) {
	a, ok := n[dev.Device]
	switch {
	case !ok:
		return NICAttributes{}, fmt.Errorf("DRA device %s: %w", dev, ErrDRAUnknownDevice)
	case a == nil:
		return NICAttributes{}, fmt.Errorf("DRA device %s: %w", dev, ErrDRANotRDMA)
	}
	return *a, nil
}

// nicMachine: a single-port RoCE mlx5_0 and a dual-port IB mlx4_0.
func nicMachine() *topology.Machine {
	return &topology.Machine{NICs: []topology.NIC{
		{Name: "mlx5_0", PCI: "0000:18:00.0", LinkLayer: topology.Ethernet, Netdev: "ens1", Ports: []topology.Port{{Num: 1}}},
		{Name: "mlx4_0", Device: "mlx4_0", Port: 1, DevicePorts: 2, PCI: "0000:5e:00.0", LinkLayer: topology.InfiniBand},
		{Name: "mlx4_0:2", Device: "mlx4_0", Port: 2, DevicePorts: 2, PCI: "0000:5e:00.0", LinkLayer: topology.InfiniBand},
		{Name: "mlx4_1", Device: "mlx4_1", Port: 1, DevicePorts: 2, PCI: "0000:5f:00.0", LinkLayer: topology.Ethernet, Netdev: "ens2",
			Ports: []topology.Port{{Num: 1, Netdevs: []string{"ens2"}}}},
		{Name: "mlx4_1:2", Device: "mlx4_1", Port: 2, DevicePorts: 2, PCI: "0000:5f:00.0", LinkLayer: topology.Ethernet,
			Ports: []topology.Port{{Num: 2, Netdevs: []string{"ens2d1"}}}},
	}}
}

func TestResolveNICs(t *testing.T) {
	addr := netip.MustParseAddr("10.56.0.5")
	slices := nicTable{
		"roce":      {RDMADevice: "mlx5_0", IfName: "ens1", PCI: "00000000:18:00.0", Addrs: []netip.Addr{addr}},
		"ib":        {RDMADevice: "mlx4_0", PCI: "0000:5E:00.0"},
		"no-name":   {PCI: "18:00.0"},
		"stale":     {RDMADevice: "mlx5_7", PCI: "0000:18:00.0"},
		"elsewhere": {RDMADevice: "mlx5_9", PCI: "0000:99:00.0"},
		"no-pci":    {RDMADevice: "mlx5_0"},
		"gve":       nil,
		"port2":     {RDMADevice: "mlx4_1", IfName: "ens2d1", PCI: "0000:5f:00.0"},
		"moved":     {RDMADevice: "mlx4_1", IfName: "gone0", PCI: "0000:5f:00.0"},
	}
	dev := func(name string) DRADevice {
		return DRADevice{Driver: DefaultDRANICDriver, Pool: "n1", Device: name, Claim: "ml/nic"}
	}
	tests := []struct {
		name    string
		dra     DRANICSlices
		devices []string
		want    string   // "nic/port/linklayer" per resolved port
		fails   []string // parts of the one error
	}{
		{name: "RoCE, cross-checked by PCI (nvidia-smi's long domain)", dra: slices, devices: []string{"roce"}, want: "mlx5_0/1/Ethernet"},
		{name: "dual-port function: both ports", dra: slices, devices: []string{"ib"}, want: "mlx4_0/1/InfiniBand mlx4_0:2/2/InfiniBand"},
		{name: "the netdev names the port of a dual-port function", dra: slices, devices: []string{"port2"}, want: "mlx4_1:2/2/Ethernet"},
		{name: "a netdev the host no longer shows: every port", dra: slices, devices: []string{"moved"}, want: "mlx4_1/1/Ethernet mlx4_1:2/2/Ethernet"},
		{name: "no RDMA device name: the PCI address decides", dra: slices, devices: []string{"no-name"}, want: "mlx5_0/1/Ethernet"},
		{name: "no RDMA function: skipped silently", dra: slices, devices: []string{"gve", "roce"}, want: "mlx5_0/1/Ethernet"},
		{name: "slice disagrees with the node", dra: slices, devices: []string{"stale"}, fails: []string{"mlx5_7", "mlx5_0", "0000:18:00.0", "ml/nic"}},
		{name: "PCI address not on the node", dra: slices, devices: []string{"elsewhere"}, fails: []string{"0000:99:00.0", "raild topo"}},
		{name: "no PCI address", dra: slices, devices: []string{"no-pci"}, fails: []string{"pciBusID", "dra.net/pciAddress"}},
		{name: "unknown device", dra: slices, devices: []string{"ghost"}, fails: []string{"ghost"}},
		{name: "no API server", devices: []string{"roce"}, fails: []string{"no API server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var devs []DRADevice
			for _, d := range tt.devices {
				devs = append(devs, dev(d))
			}
			nics, failed := ResolveNICs(context.Background(), nicMachine(), devs, tt.dra)
			var got []string
			for _, n := range nics {
				got = append(got, fmt.Sprintf("%s/%d/%s", n.NIC, n.Port, n.LinkLayer))
				if n.Device.Claim != "ml/nic" || n.PCI == "" || n.RDMADevice == "" {
					t.Errorf("record without its claim, PCI or device: %+v", n)
				}
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("resolved %v, want %q", got, tt.want)
			}
			if len(tt.fails) == 0 {
				if len(failed) != 0 {
					t.Errorf("unresolved: %v", failed)
				}
				return
			}
			if len(failed) != 1 {
				t.Fatalf("unresolved = %v; want one", failed)
			}
			for _, part := range tt.fails {
				if !strings.Contains(failed[0].Err.Error(), part) {
					t.Errorf("error %q does not name %q", failed[0].Err, part)
				}
			}
		})
	}
	nics, _ := ResolveNICs(context.Background(), nicMachine(), []DRADevice{dev("roce")}, slices)
	if nics[0].IfName != "ens1" || len(nics[0].Addrs) != 1 || nics[0].Addrs[0] != addr {
		t.Errorf("netdev and addresses lost: %+v", nics[0])
	}
}

// TestGPUSourceNICs: one kubelet answer gives a container's GPUs and its
// DRA NICs; a container holding only a NIC is kept, one holding a device
// of a driver that is neither is left out; NIC drivers off: no NICs.
func TestGPUSourceNICs(t *testing.T) {
	kubelet := ctrKubelet{"nic": {DRA: []DRADevice{{Driver: DefaultDRANICDriver, Pool: "n1", Device: "roce"}}},
		"other": {DRA: []DRADevice{{Driver: "fpga.example.com", Pool: "n1", Device: "x"}}}}
	for _, tt := range []struct {
		name    string
		drivers []string
		want    int // NICs of container "nic"
	}{{name: "on", drivers: []string{DefaultDRANICDriver}, want: 1}, {name: "off"}} {
		t.Run(tt.name, func(t *testing.T) {
			src := &GPUSource{Kubelet: kubelet, NICDrivers: tt.drivers, NICs: nicTable{"roce": {PCI: "0000:18:00.0"}},
				Machine: func() *topology.Machine { return nicMachine() }}
			byCtr, err := src.ContainerGPUs(context.Background(), "ml", "p")
			if err != nil {
				t.Fatal(err)
			}
			if got := len(byCtr["nic"].NICs); got != tt.want {
				t.Errorf("NICs of container nic = %d, want %d", got, tt.want)
			}
			if _, kept := byCtr["other"]; kept {
				t.Error("a container holding neither GPU nor NIC is kept")
			}
		})
	}
}

// ctrKubelet answers ContainerGPUs from a table.
type ctrKubelet map[string]Devices

func (k ctrKubelet) PodGPUs(context.Context, string, string, []string) (Devices, error) {
	return Devices{}, errors.New("not asked per pod")
}

func (k ctrKubelet) ContainerGPUs(context.Context, string, string, []string) (map[string]Devices, error) {
	return k, nil
}

func TestDRAHeld(t *testing.T) {
	h := NewDRAHeld()
	a := PodDRANICs{Namespace: "ml", Name: "a", NICs: []DRANIC{{NIC: "mlx5_0"}, {NIC: "mlx5_1"}}}
	h.Set("sa", a)
	h.Set("sb", PodDRANICs{Namespace: "ml", Name: "b", NICs: []DRANIC{{NIC: "mlx5_2"}}})
	h.Set("sc", PodDRANICs{Namespace: "ml", Name: "c"}) // nothing held: not kept
	a.NICs[0].NIC = "changed by the caller"
	got, ok := h.Pod("sa")
	if !ok || got.NICs[0].NIC != "mlx5_0" {
		t.Fatalf("Pod(sa) = %+v, %v: the table must keep its own copy", got, ok)
	}
	got.NICs[1].NIC = "changed by a reader"
	if again, _ := h.Pod("sa"); again.NICs[1].NIC != "mlx5_1" {
		t.Fatal("a reader changed the table")
	}
	if _, ok := h.Pod("sc"); ok {
		t.Error("a pod without DRA NICs is kept")
	}
	all := h.Pods()
	if len(all) != 2 || all["sb"].Name != "b" || len(all["sa"].NICs) != 2 {
		t.Fatalf("Pods() = %+v; want sa and sb", all)
	}
	all["sa"].NICs[0].NIC = "changed through Pods"
	if again, _ := h.Pod("sa"); again.NICs[0].NIC != "mlx5_0" {
		t.Fatal("a reader of Pods changed the table")
	}
	if len(nilTableHeld().Pods()) != 0 {
		t.Error("a nil table lists pods")
	}
	count := func() map[string]string {
		out := map[string]string{}
		h.Range(func(sandbox string, pod PodDRANICs, nic DRANIC) { out[nic.NIC] = sandbox + "=" + pod.Name })
		return out
	}
	if got := count(); len(got) != 3 || got["mlx5_2"] != "sb=b" {
		t.Errorf("Range = %v", got)
	}
	h.Retain(func(sandbox string) bool { return sandbox == "sb" })
	if got := count(); len(got) != 1 {
		t.Errorf("after Retain: %v", got)
	}
	h.Forget("sb")
	if got := count(); len(got) != 0 {
		t.Errorf("after Forget: %v", got)
	}
	var nilTable *DRAHeld
	nilTable.Range(func(string, PodDRANICs, DRANIC) { t.Error("a nil table ranges") })

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s := fmt.Sprint("s", i)
			h.Set(s, a)
			h.Range(func(string, PodDRANICs, DRANIC) {})
			h.Forget(s)
		})
	}
	wg.Wait()
}

func nilTableHeld() *DRAHeld { return nil }

func TestUnionGPUs(t *testing.T) {
	got := UnionGPUs(map[string]Held{"b": {GPUs: []int{3, 1}}, "a": {GPUs: []int{1, 2}}, "c": {}})
	if !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("UnionGPUs = %v; want 1, 2, 3 (containers by name, each GPU once)", got)
	}
}
