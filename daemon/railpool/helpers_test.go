package railpool

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// cluster is a fake API server holding nodes, RailPools and blocks.
type cluster struct {
	kube *kubefake.Clientset
	dyn  *dynfake.FakeDynamicClient
}

func newCluster(t *testing.T, nodes []*corev1.Node, pools ...*RailPool) *cluster {
	t.Helper()
	kube := kubefake.NewClientset()
	for _, n := range nodes {
		if _, err := kube.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{PoolResource: "RailPoolList", BlockResource: "RailPoolBlockList"})
	c := &cluster{kube: kube, dyn: dyn}
	for _, p := range pools {
		c.create(t, PoolResource, p)
	}
	return c
}

func (c *cluster) create(t *testing.T, gvr schema.GroupVersionResource, obj any) {
	t.Helper()
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetAPIVersion(Group + "/" + Version)
	if _, err := c.dyn.Resource(gvr).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) claimer(node string) Claimer {
	return Claimer{Kube: c.kube, Dyn: c.dyn, Node: node}
}

// blocks returns every block object, by name.
func (c *cluster) blocks(t *testing.T) map[string]RailPoolBlock {
	t.Helper()
	list, err := c.dyn.Resource(BlockResource).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]RailPoolBlock{}
	for _, item := range list.Items {
		var b RailPoolBlock
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &b); err != nil {
			t.Fatal(err)
		}
		out[b.Name] = b
	}
	return out
}

func node(name, uid string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), Labels: labels}}
}

func pool(name, subnet string, blockSize int, edit ...func(*PoolSpec)) *RailPool {
	p := &RailPool{TypeMeta: metav1.TypeMeta{Kind: "RailPool"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: PoolSpec{Subnet: subnet, BlockSize: blockSize}}
	for _, e := range edit {
		e(&p.Spec)
	}
	return p
}
