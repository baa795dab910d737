package kapi_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/railcni/rail/integration/kapi"
)

const primaryConflist = `{"cniVersion":"1.0.0","name":"k8s","plugins":[{"type":"ptp","ipam":{"type":"host-local","subnet":"10.1.0.0/24"}}]}`

// TestPreStopKeepsTheEntryOnARollout: the chart's preStop
// (install-cni --uninstall --unless-rollout) keeps rail's entry while
// raild's DaemonSet lives and removes it when the DaemonSet is being
// deleted, is gone, or the API server cannot be asked.
func TestPreStopKeepsTheEntryOnARollout(t *testing.T) {
	s := kapi.Start(t)
	kube := s.Clients.Kube
	dead := deadKubeconfig(t)
	tests := []struct {
		name        string
		setup       func(t *testing.T, ds *appsv1.DaemonSet)
		kubeconfig  string
		wantEntry   bool
		wantMessage string
	}{
		{name: "rollout: the DaemonSet lives", setup: func(*testing.T, *appsv1.DaemonSet) {}, wantEntry: true,
			wantMessage: "kept rail's entry: DaemonSet default/rail-%d lives"},
		{name: "the DaemonSet is being deleted", setup: func(t *testing.T, ds *appsv1.DaemonSet) {
			ctx := context.Background()
			ds.Finalizers = []string{"kpods.test/hold"}
			if _, err := kube.AppsV1().DaemonSets("default").Update(ctx, ds, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			foreground := metav1.DeletePropagationForeground
			if err := kube.AppsV1().DaemonSets("default").Delete(ctx, ds.Name, metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { // let it go
				got, err := kube.AppsV1().DaemonSets("default").Get(ctx, ds.Name, metav1.GetOptions{})
				if err == nil {
					got.Finalizers = nil
					_, _ = kube.AppsV1().DaemonSets("default").Update(ctx, got, metav1.UpdateOptions{})
				}
			})
		}, wantMessage: "removing rail's entry: DaemonSet default/rail-%d is being deleted"},
		{name: "the DaemonSet is gone (helm uninstall)", setup: func(t *testing.T, ds *appsv1.DaemonSet) {
			if err := kube.AppsV1().DaemonSets("default").Delete(context.Background(), ds.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, wantMessage: "removing rail's entry: DaemonSet default/rail-%d is gone"},
		{name: "API server unreachable", setup: func(*testing.T, *appsv1.DaemonSet) {}, kubeconfig: dead,
			wantMessage: "removing rail's entry: cannot read pod default/rail-%d-pod"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			confDir := chainedConfDir(t)
			ds, pod := raildDaemonSet(t, kube, fmt.Sprintf("rail-%d", i))
			tt.setup(t, ds)
			kubeconfig := s.Kubeconfig
			if tt.kubeconfig != "" {
				kubeconfig = tt.kubeconfig
			}
			cmd := exec.Command(raildBin(t), "install-cni", "--uninstall", "--unless-rollout", "--mode", "chained",
				"--conf-dir", confDir, "--kubeconfig", kubeconfig)
			cmd.Env = append(os.Environ(), "POD_NAMESPACE=default", "POD_NAME="+pod.Name)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("install-cni: %v\n%s", err, out)
			}
			if want := fmt.Sprintf(tt.wantMessage, i); !strings.Contains(string(out), want) {
				t.Errorf("output %q, want %q", out, want)
			}
			if got := hasRailEntry(t, confDir); got != tt.wantEntry {
				t.Errorf("rail's entry in the conflist: %v, want %v\n%s", got, tt.wantEntry, out)
			}
		})
	}
}

// chainedConfDir is a conf dir with a primary conflist and rail's entry in it.
func chainedConfDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	confDir, from, to := filepath.Join(dir, "net.d"), filepath.Join(dir, "from"), filepath.Join(dir, "to")
	for _, d := range []string{confDir, from, to} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, bin := range []string{"rail", "rail-ipam"} {
		if err := os.WriteFile(filepath.Join(from, bin), []byte("#!/bin/true\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(confDir, "10-k8s.conflist"), []byte(primaryConflist), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(raildBin(t), "install-cni", "--mode", "chained", "--conf-dir", confDir, "--from", from, "--to", to).CombinedOutput()
	if err != nil || !hasRailEntry(t, confDir) {
		t.Fatalf("install-cni: %v, entry %v\n%s", err, hasRailEntry(t, confDir), out)
	}
	return confDir
}

func hasRailEntry(t *testing.T, confDir string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(confDir, "10-k8s.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(data), `"type":"rail"`)
}

// raildDaemonSet creates a DaemonSet (no controller runs: its pod is
// created here, owned by it, as the DaemonSet controller would).
func raildDaemonSet(t *testing.T, kube kubernetes.Interface, name string) (*appsv1.DaemonSet, *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": name}
	ds, err := kube.AppsV1().DaemonSets("default").Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "raild", Image: "registry.example/rail:1"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	pod := kpodsPod(name+"-pod", kpodsNode, nil)
	pod.Labels = labels
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: name, UID: ds.UID, Controller: &yes}}
	return ds, createPod(t, kube, pod)
}

// deadKubeconfig names an API server that refuses connections.
func deadKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	text := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:%d\", insecure-skip-tls-verify: true}\n"+
		"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n", freePort(t))
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
