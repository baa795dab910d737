package dradriver_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/railcni/rail/integration/dradriver"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestSliceShape: one device per PCI function, named and attributed as
// DRANet does, plus the virtual non-RDMA NIC; Publish creates the slice
// and replaces it on a second call.
func TestSliceShape(t *testing.T) {
	root := t.TempDir()
	if _, err := fakesys.Write(root, "dualport-2s", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	slice := dradriver.Slice(m, dradriver.Options{Node: "n1", Addrs: map[string][]string{"mlx4_1": {"10.56.0.5/24"}}})
	if slice.Spec.Driver != "dra.net" || *slice.Spec.NodeName != "n1" || slice.Spec.Pool.Name != "n1" {
		t.Fatalf("slice spec = %+v", slice.Spec)
	}
	functions := map[string]bool{}
	for _, n := range m.NICs {
		functions[n.PCI] = true
	}
	if got, want := len(slice.Spec.Devices), len(functions)+1; got != want {
		t.Fatalf("%d devices, want %d (one per PCI function of %d ports, plus %s)", got, want, len(m.NICs), dradriver.VirtualDevice)
	}
	for _, d := range slice.Spec.Devices {
		rdma := d.Attributes["dra.net/rdma"].BoolValue
		if d.Name == dradriver.VirtualDevice {
			if rdma == nil || *rdma {
				t.Errorf("%s must say dra.net/rdma: false", d.Name)
			}
			continue
		}
		pci := d.Attributes["dra.net/pciAddress"].StringValue
		if pci == nil || d.Name != dradriver.DeviceName(*pci) || rdma == nil || !*rdma || d.Attributes["dra.net/rdmaDevice"].StringValue == nil {
			t.Errorf("device %s: %v", d.Name, d.Attributes)
		}
		if *d.Attributes["dra.net/rdmaDevice"].StringValue == "mlx4_1" {
			if v := d.Attributes["dra.net/ipv4"].StringValue; v == nil || *v != "10.56.0.5/24" {
				t.Errorf("mlx4_1's address not published: %v", d.Attributes)
			}
		}
	}
	client := fake.NewClientset()
	ctx := context.Background()
	if err := dradriver.Publish(ctx, client, slice); err != nil {
		t.Fatal(err)
	}
	slice.Spec.Pool.Generation = 2
	if err := dradriver.Publish(ctx, client, slice); err != nil {
		t.Fatal(err)
	}
	got, err := client.ResourceV1().ResourceSlices().Get(ctx, slice.Name, metav1.GetOptions{})
	if err != nil || got.Spec.Pool.Generation != 2 {
		t.Fatalf("published slice = %v, %v; want generation 2", got, err)
	}
}
