package draslices_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/railcni/rail/daemon/draslices"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/podinfo"
)

const nicDriver = "dra.net"

// dranetDevice is a device the way DRANet publishes one: a PCI function
// named after its address, string attributes in its domain, dra.net/rdma
// as a bool; extra adds or overrides attributes (full names).
func dranetDevice(name string, rdma bool, attrs map[string]string) resourcev1.Device {
	d := device(name, nil)
	d.Attributes[nicDriver+"/rdma"] = resourcev1.DeviceAttribute{BoolValue: &rdma}
	for k, v := range attrs {
		d.Attributes[resourcev1.QualifiedName(k)] = str(v)
	}
	return d
}

func TestNICAttributes(t *testing.T) {
	client := fake.NewClientset(
		testSlices()[1], // the GPU slice: GPU devices are no NICs
		slice("a-dranet", nicDriver, node, 3, []resourcev1.Device{
			dranetDevice("pci-0000-18-00-0", true, map[string]string{"dra.net/pciAddress": "0000:18:00.0", "dra.net/rdmaDevice": "mlx5_0",
				"dra.net/ifName": "ens1f0np0", "dra.net/ipv4": "10.56.0.5/24,10.56.0.6", "dra.net/ipv6": "fd00::5/64",
				"resource.kubernetes.io/pcieRoot": "pci0000:16"}),
			dranetDevice("pci-0000-19-00-0", true, map[string]string{"dra.net/pciAddress": "0000:19:00.0",
				"resource.kubernetes.io/pciBusID": "0000:19:00.1"}),
			dranetDevice("gve0", false, map[string]string{"dra.net/ifName": "gve0"}),
			dranetDevice("pci-bad-ip", true, map[string]string{"dra.net/pciAddress": "0000:1a:00.0", "dra.net/ipv4": "ten.0.0.1"}),
		}, nil),
	)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := draslices.Start(ctx, &kubeclient.Clients{Kube: client, Watch: client},
		draslices.Options{Node: node, NICDrivers: []string{nicDriver}, Wait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	dev := func(driver, name string) podinfo.DRADevice {
		return podinfo.DRADevice{Driver: driver, Pool: node, Device: name, Claim: "ml/rdma"}
	}
	tests := []struct {
		name    string
		dev     podinfo.DRADevice
		want    podinfo.NICAttributes
		wantErr error
		wantMsg []string
	}{
		{name: "DRANet RoCE device", dev: dev(nicDriver, "pci-0000-18-00-0"), want: podinfo.NICAttributes{RDMADevice: "mlx5_0", IfName: "ens1f0np0",
			PCI: "0000:18:00.0", Addrs: []netip.Addr{netip.MustParseAddr("10.56.0.5"), netip.MustParseAddr("10.56.0.6"), netip.MustParseAddr("fd00::5")}}},
		{name: "standard pciBusID first", dev: dev(nicDriver, "pci-0000-19-00-0"), want: podinfo.NICAttributes{PCI: "0000:19:00.1"}},
		{name: "no RDMA function", dev: dev(nicDriver, "gve0"), wantErr: podinfo.ErrDRANotRDMA, wantMsg: []string{"gve0", "dra.net/rdma"}},
		{name: "bad address attribute", dev: dev(nicDriver, "pci-bad-ip"), wantMsg: []string{"dra.net/ipv4", "ten.0.0.1"}},
		{name: "not listed", dev: dev(nicDriver, "pci-0000-99-00-0"), wantErr: podinfo.ErrDRAUnknownDevice, wantMsg: []string{"ml/rdma"}},
		{name: "a GPU driver is no NIC driver", dev: dev(gpuDriver, "gpu-0"), wantMsg: []string{"not a NIC driver", "draNICDrivers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.NICAttributes(context.Background(), tt.dev)
			if tt.wantErr == nil && len(tt.wantMsg) == 0 {
				if err != nil || got.RDMADevice != tt.want.RDMADevice || got.IfName != tt.want.IfName || got.PCI != tt.want.PCI ||
					!slices.Equal(got.Addrs, tt.want.Addrs) {
					t.Fatalf("NICAttributes = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("NICAttributes = %+v; want an error", got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v is not %v", err, tt.wantErr)
			}
			for _, part := range tt.wantMsg {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not name %q", err, part)
				}
			}
		})
	}
	// the NIC slices do not make the NIC driver a GPU driver
	if _, err := s.GPUID(context.Background(), dev(nicDriver, "pci-0000-18-00-0")); err == nil || !strings.Contains(err.Error(), "not a GPU driver") {
		t.Errorf("GPUID of a NIC = %v; want not a GPU driver", err)
	}
}

func TestNICsOf(t *testing.T) {
	objs := append(testSlices(),
		slice("a-rail", "rail.dev", node, 1, []resourcev1.Device{device("mlx5-0", map[string]string{"resource.kubernetes.io/pciBusID": "0000:19:00.0"})}, nil),
		slice("a-sriov", "sriovnetwork.k8snetworkplumbingwg.io", node, 1, []resourcev1.Device{
			device("vf-0", map[string]string{"sriovnetwork.k8snetworkplumbingwg.io/pciAddress": "0000:1a:00.2"})}, nil),
		slice("b-nics", "dra.net", "node-b", 1, []resourcev1.Device{device("eth9", map[string]string{"resource.kubernetes.io/pciBusID": "0000:99:00.0"})}, otherNode))
	s := start(t, fake.NewClientset(objs...), time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for !s.Synced() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := s.NICsOf("rail.dev")
	for pci, driver := range map[string]string{"0000:18:00.0": "dra.net", "0000:1a:00.2": "sriovnetwork.k8snetworkplumbingwg.io"} {
		if got[pci] != driver {
			t.Errorf("%s: driver %q, want %s (all: %v)", pci, got[pci], driver, got)
		}
	}
	for _, pci := range []string{"0000:19:00.0", "0000:99:00.0"} {
		if d, ok := got[pci]; ok {
			t.Errorf("%s listed as %s's: Rail's own or another node's", pci, d)
		}
	}
}
