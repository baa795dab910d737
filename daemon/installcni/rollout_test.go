package installcni

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func TestOwnerLives(t *testing.T) {
	yes := true
	now := metav1.Now()
	ds := func(uid string, deleting bool) *appsv1.DaemonSet {
		d := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "rail-system", Name: "rail", UID: types.UID("ds-" + uid)}}
		if deleting {
			d.DeletionTimestamp, d.Finalizers = &now, []string{"test/hold"}
		}
		return d
	}
	pod := func(ownerKind, ownerUID string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "rail-system", Name: "rail-abcde"}}
		if ownerKind != "" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: "rail",
				UID: types.UID("ds-" + ownerUID), Controller: &yes}}
		}
		return p
	}
	tests := []struct {
		name     string
		objects  []runtime.Object
		wantKeep bool
		wantWhy  string
	}{
		{name: "rollout: the DaemonSet lives", objects: []runtime.Object{pod("DaemonSet", "1"), ds("1", false)}, wantKeep: true,
			wantWhy: "DaemonSet rail-system/rail lives"},
		{name: "DaemonSet being deleted", objects: []runtime.Object{pod("DaemonSet", "1"), ds("1", true)}, wantWhy: "is being deleted"},
		{name: "DaemonSet gone", objects: []runtime.Object{pod("DaemonSet", "1")}, wantWhy: "DaemonSet rail-system/rail is gone"},
		{name: "DaemonSet replaced", objects: []runtime.Object{pod("DaemonSet", "1"), ds("2", false)}, wantWhy: "was replaced"},
		{name: "pod not from a DaemonSet", objects: []runtime.Object{pod("", ""), ds("1", false)}, wantWhy: "no controlling DaemonSet"},
		{name: "pod unknown", objects: []runtime.Object{ds("1", false)}, wantWhy: "cannot read pod rail-system/rail-abcde"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keep, why := ownerLives(context.Background(), fake.NewClientset(tt.objects...), "rail-system", "rail-abcde")
			if keep != tt.wantKeep || !strings.Contains(why, tt.wantWhy) {
				t.Errorf("keep %v (%s), want %v (%s)", keep, why, tt.wantKeep, tt.wantWhy)
			}
		})
	}
}

// TestUnlessRolloutNeedsThePodName: without the downward-API variables
// install-cni cannot tell a rollout, and removes the entry as before.
func TestUnlessRolloutNeedsThePodName(t *testing.T) {
	t.Setenv("POD_NAME", "")
	t.Setenv("POD_NAMESPACE", "rail-system")
	var out strings.Builder
	if keepForRollout("", &out) {
		t.Fatal("kept the entry without a pod name")
	}
	if !strings.Contains(out.String(), "$POD_NAMESPACE or $POD_NAME is empty") {
		t.Errorf("output %q does not say why", out.String())
	}
}
