package kapi_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/railcni/rail/daemon/draplugin"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/readiness"
	"github.com/railcni/rail/integration/kapi"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestRailDRADriverOnARealAPIServer: raild's driver, as raild's service
// account with the RBAC the chart renders under dra.enabled (and its
// node in the token, as a bound pod token carries it), publishes the
// slice it builds for the down-bond machine, which passes the API
// server's validation as built (v1.36: nothing dropped, so the down port
// keeps its taint and the shared ports their consumable capacity), and
// applies a claim's status.devices entry for a device allocated on its
// node (resourceclaims/driver associated-node:patch).
func TestRailDRADriverOnARealAPIServer(t *testing.T) {
	s := kapi.Start(t)
	ctx := context.Background()
	kube := s.Clients.Kube
	if _, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: draNode}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	driverKube := chartDRAClients(t, s)
	root := filepath.Join(t.TempDir(), "root")
	if _, err := fakesys.Write(root, "down-bond", fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := draplugin.OpenClaims(draplugin.ClaimsFile(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := draplugin.New(draplugin.Options{Node: draNode, Kube: driverKube, Claims: claims,
		Config: draplugin.Config{KubeletDir: filepath.Join(t.TempDir(), "kubelet"), SharedBandwidth: true},
		View:   func() draplugin.NodeView { return draplugin.NodeView{Machine: m} },
		Attachments: func(string, string, string) []draplugin.Attachment {
			return []draplugin.Attachment{{NIC: "mlx5_0", IfName: "net1", IPs: []string{"10.56.0.5/24"}, MAC: "02:00:00:00:00:05"}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	var slice resourcev1.ResourceSlice
	deadline := time.Now().Add(time.Minute)
	for {
		list, err := kube.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 1 {
			slice = list.Items[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slice published: %v %v", list, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	byName := map[string]resourcev1.Device{}
	for _, d := range slice.Spec.Devices {
		byName[d.Name] = d
	}
	if slice.Spec.Driver != "rail.dev" || *slice.Spec.NodeName != draNode || len(byName) != 3 {
		t.Fatalf("slice %+v", slice.Spec)
	}
	if d := byName["mlx5-1"]; len(d.Taints) != 1 || d.Taints[0].Key != "rail.dev/port-down" {
		t.Errorf("the down port as stored: %+v", d)
	}
	slots := byName["mlx5-0"].Capacity["rail.dev/slots"].Value
	if d := byName["mlx5-0"]; d.AllowMultipleAllocations == nil || !*d.AllowMultipleAllocations || slots.Value() != 8 {
		t.Errorf("the shared port as stored: %+v", d)
	}

	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nic"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "nic", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "rail.dev-shared"}}}}}}
	claim, err = kube.ResourceV1().ResourceClaims("default").Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	share := "0b0e6f7a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "nic", Driver: "rail.dev", Pool: draNode, Device: "mlx5-0", ShareID: ptrUID(share)}}},
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{draNode}}}}}}}
	if _, err := kube.ResourceV1().ResourceClaims("default").UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := claims.Put(draplugin.Prepared{UID: claim.UID, Namespace: "default", Name: "nic", Pods: []draplugin.PodRef{{Name: "pod", UID: "pod-uid"}},
		Devices: []draplugin.Assigned{{Request: "nic", Pool: draNode, Device: "mlx5-0", ShareID: share, Kind: draplugin.KindShared, NIC: "mlx5_0"}}}); err != nil {
		t.Fatal(err)
	}
	p.RDMAReady(readiness.Condition{Namespace: "default", Name: "pod", UID: "pod-uid", Ready: true, Reason: "RDMAPathReady"})
	deadline = time.Now().Add(time.Minute)
	for {
		got, err := kube.ResourceV1().ResourceClaims("default").Get(ctx, "nic", metav1.GetOptions{})
		if err == nil && len(got.Status.Devices) == 1 {
			d := got.Status.Devices[0]
			if d.NetworkData == nil || d.NetworkData.InterfaceName != "net1" || d.NetworkData.HardwareAddress != "02:00:00:00:00:05" ||
				d.ShareID == nil || *d.ShareID != share || len(d.Conditions) != 2 {
				t.Fatalf("status.devices[0] %+v", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the claim's status never got Rail's entry: %+v %v", got.Status, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ptrUID(s string) *types.UID { u := types.UID(s); return &u }

// chartDRAClients are raild's service account's clients with the chart's
// RBAC for dra.enabled (helm from the rig's bin dir), on node draNode.
func chartDRAClients(t *testing.T, s *kapi.Server) kubernetes.Interface {
	t.Helper()
	helm := filepath.Join(os.Getenv(kapi.EnvBin), "helm")
	t.Setenv("HELM_CACHE_HOME", t.TempDir())
	t.Setenv("HELM_CONFIG_HOME", t.TempDir())
	out, err := exec.Command(helm, "template", "rail", filepath.Join("..", "..", "manifests", "helm", "rail"), "-n", "rail-system",
		"--set", "dra.enabled=true").Output()
	if err != nil {
		t.Fatalf("helm template --set dra.enabled=true: %v", err)
	}
	role, binding := rbacOf(t, out)
	bindRBAC(t, s, role, binding)
	sa := binding.Subjects[0]
	cfg := rest.CopyConfig(s.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		Extra: map[string][]string{"authentication.kubernetes.io/node-name": {draNode}}}
	clients, err := kubeclient.New(cfg, "rail-dra-driver-test")
	if err != nil {
		t.Fatal(err)
	}
	return clients.Kube
}
