package draplugin

import (
	"context"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/railcni/rail/daemon/readiness"
)

func TestStatusOf(t *testing.T) {
	p := newPlugin(t, machine(t, "h100x8-cx7x4"), nil, t.TempDir())
	p.opt.Attachments = func(ns, name, uid string) []Attachment {
		if ns != "ml" || name != "pod-a" || uid != "pod-uid-a" {
			t.Errorf("attachments asked for %s/%s %s", ns, name, uid)
		}
		return []Attachment{{NIC: "mlx5_1", IfName: "net1", IPs: []string{"10.56.0.5/24"}, MAC: "00:11:22:33:44:55"}}
	}
	prep := Prepared{UID: "uid-a", Namespace: "ml", Name: "a", Devices: []Assigned{
		{Request: "nic", Pool: testNode, Device: "mlx5-1", NIC: "mlx5_1", ShareID: "share-1", Kind: KindShared},
		{Request: "nic2", Pool: testNode, Device: "mlx5-2", NIC: "mlx5_2", Kind: KindShared},
	}}
	for _, tc := range []struct {
		name string
		cond readiness.Condition
		rdma metav1.ConditionStatus
	}{
		{"ready", readiness.Condition{Namespace: "ml", Name: "pod-a", UID: "pod-uid-a", Ready: true, Reason: "RDMAPathReady"}, metav1.ConditionTrue},
		{"not ready", readiness.Condition{Namespace: "ml", Name: "pod-a", UID: "pod-uid-a", Reason: "PortDown", Message: "mlx5_1 DOWN"}, metav1.ConditionFalse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ac := p.statusOf(prep, tc.cond, time.Unix(1000, 0))
			if *ac.Name != "a" || *ac.Namespace != "ml" || len(ac.Status.Devices) != 2 {
				t.Fatalf("apply config %+v", ac)
			}
			d := ac.Status.Devices[0]
			if *d.Driver != "rail.dev" || *d.Pool != testNode || *d.Device != "mlx5-1" || *d.ShareID != "share-1" {
				t.Errorf("device %+v", d)
			}
			nd := d.NetworkData
			if nd == nil || *nd.InterfaceName != "net1" || len(nd.IPs) != 1 || nd.IPs[0] != "10.56.0.5/24" || *nd.HardwareAddress != "00:11:22:33:44:55" {
				t.Errorf("networkData %+v", nd)
			}
			if len(d.Conditions) != 2 || *d.Conditions[0].Type != "Ready" || *d.Conditions[0].Status != metav1.ConditionTrue ||
				*d.Conditions[1].Type != "rail.dev/RDMAReady" || *d.Conditions[1].Status != tc.rdma || *d.Conditions[1].Reason != tc.cond.Reason {
				t.Errorf("conditions %+v", d.Conditions)
			}
			second := ac.Status.Devices[1]
			if second.NetworkData != nil || *second.Conditions[0].Status != metav1.ConditionFalse || *second.Conditions[0].Reason != "NotAttached" {
				t.Errorf("the device without an interface: %+v", second)
			}
		})
	}
}

// TestStatusApplied: the status reaches the claim through the API
// (server-side apply on status, a fake API server), and a second write
// replaces Rail's entries instead of adding to them.
func TestStatusApplied(t *testing.T) {
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "a", UID: "uid-a"}}
	kube := fake.NewClientset(claim)
	p := newPlugin(t, machine(t, "h100x8-cx7x4"), nil, t.TempDir())
	p.opt.Kube = kube
	p.opt.Attachments = func(string, string, string) []Attachment {
		return []Attachment{{NIC: "mlx5_1", IfName: "net1", IPs: []string{"10.56.0.5/24"}}}
	}
	prep := Prepared{UID: "uid-a", Namespace: "ml", Name: "a", Devices: []Assigned{{Request: "nic", Pool: testNode, Device: "mlx5-1", NIC: "mlx5_1"}}}
	ctx := context.Background()
	for _, ready := range []bool{false, true} {
		if err := p.status.write(ctx, prep, readiness.Condition{Namespace: "ml", Name: "pod-a", UID: "pod-uid-a", Ready: ready}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := kube.ResourceV1().ResourceClaims("ml").Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Devices) != 1 {
		t.Fatalf("status.devices %+v, want one entry", got.Status.Devices)
	}
	d := got.Status.Devices[0]
	if d.Driver != "rail.dev" || d.Device != "mlx5-1" || d.NetworkData == nil || d.NetworkData.InterfaceName != "net1" {
		t.Errorf("entry %+v", d)
	}
	if len(d.Conditions) != 2 || d.Conditions[1].Type != ConditionRDMAReady || d.Conditions[1].Status != metav1.ConditionTrue {
		t.Errorf("conditions %+v, want RDMAReady True from the last write", d.Conditions)
	}
}
