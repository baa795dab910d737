package service

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/api"
)

// nicAttrs stands in for a NIC driver's slices: device name -> attributes.
type nicAttrs map[string]podinfo.NICAttributes

func (n nicAttrs) NICAttributes(_ context.Context, dev podinfo.DRADevice) (podinfo.NICAttributes, error) {
	if a, ok := n[dev.Device]; ok {
		return a, nil
	}
	return podinfo.NICAttributes{}, fmt.Errorf("DRA device %s: %w", dev, podinfo.ErrDRAUnknownDevice)
}

// TestPlacementLeavesDRANICs: a NIC a DRA NIC driver gave a pod is never
// placed by rail, in any mode, while the claim holds it — whether another
// pod holds it (known from NRI) or the pod being added does (its claim,
// read at ADD before the driver moves the NIC). Without the table (the
// old code), GPU 4's nearest NIC mlx5_2 is taken: the control rows.
func TestPlacementLeavesDRANICs(t *testing.T) {
	const nicDevice = "pci-mlx5-2"
	tests := []struct {
		name    string
		noTable bool                // raild without the table: the control
		other   bool                // another sandbox holds mlx5_2 through DRA
		own     bool                // the pod's own claim holds mlx5_2
		named   bool                // the pod names its GPU (annotation)
		mode    api.Mode            //
		want    func([]string) bool // on the plan's NICs
		wantDoc string
	}{
		{name: "control: no table, move takes mlx5_2", noTable: true, other: true, mode: api.ModeMove,
			want: func(n []string) bool { return slices.Equal(n, []string{"rail0=mlx5_2"}) }, wantDoc: "mlx5_2"},
		{name: "another pod's DRA NIC: move", other: true, mode: api.ModeMove,
			want: func(n []string) bool { return len(n) == 1 && n[0] != "rail0=mlx5_2" }, wantDoc: "one NIC, not mlx5_2"},
		{name: "another pod's DRA NIC: ipoib child", other: true, mode: api.ModeIPoIB,
			want: func(n []string) bool { return len(n) == 1 && n[0] != "rail0=mlx5_2" }, wantDoc: "one NIC, not mlx5_2"},
		{name: "the pod's own DRA NIC: move", own: true, mode: api.ModeMove,
			want: func(n []string) bool { return len(n) == 1 && n[0] != "rail0=mlx5_2" }, wantDoc: "one NIC, not mlx5_2"},
		{name: "the pod's own DRA NIC, GPUs named by annotation", own: true, named: true, mode: api.ModeMove,
			want: func(n []string) bool { return len(n) == 1 && n[0] != "rail0=mlx5_2" }, wantDoc: "one NIC, not mlx5_2"},
		{name: "control: no table, own claim ignored", noTable: true, own: true, mode: api.ModeMove,
			want: func(n []string) bool { return slices.Equal(n, []string{"rail0=mlx5_2"}) }, wantDoc: "mlx5_2"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			devices := podinfo.Devices{DRA: []podinfo.DRADevice{gpuDev("gpu-4")}}
			if tt.own {
				devices.DRA = append(devices.DRA, podinfo.DRADevice{Driver: podinfo.DefaultDRANICDriver, Pool: "node1", Device: nicDevice, Claim: "default/nic"})
			}
			held := podinfo.NewDRAHeld()
			svc, spec := newService(t, "h100x8-cx7x4", onePool(), fakeKubelet{"default/pod-x": devices}, func(o *Options) {
				o.GPUs.NICDrivers = []string{podinfo.DefaultDRANICDriver}
				if !tt.noTable {
					o.DRAHeld = held
				}
			})
			pci := ""
			for _, n := range spec.NICs {
				if n.Name == "mlx5_2" {
					pci = n.PCI
				}
			}
			svc.opt.GPUs.NICs = nicAttrs{nicDevice: {RDMADevice: "mlx5_2", PCI: pci}}
			svc.opt.GPUs.DRA = fakeDRA{ids: map[string]string{"gpu.nvidia.com/node1/gpu-4": spec.GPUs[4].PCI}}
			if tt.other {
				held.Set("other-sandbox", podinfo.PodDRANICs{Namespace: "default", Name: "dranet-pod",
					NICs: []podinfo.DRANIC{{NIC: "mlx5_2", RDMADevice: "mlx5_2", Port: 1, PCI: pci}}})
			}
			req := allocReq(fmt.Sprintf("sb%d", i), "")
			req.Annotations, req.PodName, req.Mode = nil, "pod-x", tt.mode
			req.PodUID, req.Netns = "uid-x", "/var/run/netns/cni-x"
			if tt.named {
				req.Annotations = map[string]string{api.AnnotationGPUs: "4"}
			}
			plan, err := svc.Allocate(context.Background(), req)
			if err != nil {
				t.Fatalf("Allocate: %v", err)
			}
			if got := nicsOf(plan); !tt.want(got) {
				t.Fatalf("NICs = %v, want %s", got, tt.wantDoc)
			}
			if tt.own && !tt.noTable {
				pod, ok := svc.DRANICs(req.Sandbox)
				if !ok || len(pod.NICs) != 1 || pod.NICs[0].NIC != "mlx5_2" || pod.Name != "pod-x" ||
					pod.UID != "uid-x" || pod.Netns != "/var/run/netns/cni-x" || !slices.Equal(pod.GPUs, []int{4}) {
					t.Fatalf("DRANICs(%s) = %+v, %v; want pod-x (uid-x, its netns, GPU 4) holding mlx5_2", req.Sandbox, pod, ok)
				}
				// the CNI DEL (also of a sandbox that failed to start) forgets it
				if err := svc.Release(context.Background(), api.AttachmentRequest{Sandbox: req.Sandbox, CNIIfName: req.CNIIfName,
					Network: req.Network}); err != nil {
					t.Fatal(err)
				}
				if pod, ok := svc.DRANICs(req.Sandbox); ok {
					t.Fatalf("after the CNI DEL the sandbox still holds %+v", pod)
				}
			}
		})
	}
}
