package kapi_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/integration/kapi"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// baseRBAC reads raild's ClusterRole and ClusterRoleBinding from the
// kustomize base (generated from the Helm chart; integration/k8s fails
// when it is stale).
func baseRBAC(t *testing.T) (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "manifests", "kustomize", "base", "raild.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return rbacOf(t, data)
}

// rbacOf reads raild's ClusterRole and ClusterRoleBinding from rendered manifests.
func rbacOf(t *testing.T, data []byte) (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	t.Helper()
	var role *rbacv1.ClusterRole
	var binding *rbacv1.ClusterRoleBinding
	for _, doc := range strings.Split(string(data), "\n---") {
		var meta metav1.TypeMeta
		err := yaml.Unmarshal([]byte(doc), &meta)
		if err != nil {
			t.Fatalf("rendered manifests: %v", err)
		}
		switch meta.Kind {
		case "ClusterRole":
			role = &rbacv1.ClusterRole{}
			err = yaml.Unmarshal([]byte(doc), role)
		case "ClusterRoleBinding":
			binding = &rbacv1.ClusterRoleBinding{}
			err = yaml.Unmarshal([]byte(doc), binding)
		}
		if err != nil {
			t.Fatalf("rendered manifests, %s: %v", meta.Kind, err)
		}
	}
	if role == nil || binding == nil || len(binding.Subjects) != 1 {
		t.Fatal("no ClusterRole and ClusterRoleBinding for raild's service account in the manifests")
	}
	return role, binding
}

// bindRBAC creates the service account's namespace, the role and the binding.
func bindRBAC(t *testing.T, s *kapi.Server, role *rbacv1.ClusterRole, binding *rbacv1.ClusterRoleBinding) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: binding.Subjects[0].Namespace}}
	if _, err := s.Clients.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Clients.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Clients.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestDRAWithTheChartsRBAC: raild's service account, with exactly the
// chart's ClusterRole, can keep the node's ResourceSlices; without the
// binding the slices never sync and the ADD says why (code 11).
func TestDRAWithTheChartsRBAC(t *testing.T) {
	s := kapi.Start(t)
	ctx := context.Background()
	root := t.TempDir()
	spec, err := fakesys.Write(root, draMachine, fakesys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Clients.Kube.ResourceV1().ResourceSlices().Create(ctx, nodeGPUSlice(spec), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role, binding := baseRBAC(t)
	sa := binding.Subjects[0]
	cfg := rest.CopyConfig(s.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name}
	clients, err := kubeclient.New(cfg, "rail-dra-rbac-test")
	if err != nil {
		t.Fatal(err)
	}
	dev := podinfo.DRADevice{Driver: draDriver, Pool: draNode, Device: "gpu-4", Claim: "default/gpus"}

	_, err = startSlices(t, clients, time.Second).GPUID(ctx, dev)
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("GPUID without RBAC = %v; want a not-synced error saying forbidden", err)
	}

	bindRBAC(t, s, role, binding)
	id, err := startSlices(t, clients, 10*time.Second).GPUID(ctx, dev)
	if err != nil || id != nvidiaBusID(spec.GPUs[4].PCI) {
		t.Fatalf("GPUID with the chart's RBAC = %q, %v; want GPU 4's bus ID", id, err)
	}
}
