package serve

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

// TestReadNodeAppliesTheClass: raild's Node picks the class by its labels
// and names its InternalIP; the node's limits follow the class.
func TestReadNodeAppliesTheClass(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Labels: map[string]string{"gpu": "v100"}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeHostName, Address: "gpu-1"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.5"}}}}
	cfg := &config.Config{NodeName: "gpu-1", NICs: []string{"mlx5_0", "mlx5_1"}, NodeClasses: []config.NodeClass{
		{Name: "a100", NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "a100"}}, NICs: []string{"mlx5_2"}},
		{Name: "v100", NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "v100"}},
			NICs: []string{"mlx5_0"}, Modes: []api.Mode{api.ModeMove}},
	}}
	clients := &kubeclient.Clients{Kube: fake.NewClientset(node)}
	ips, err := readNode(context.Background(), cfg, clients, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ips, []netip.Addr{netip.MustParseAddr("10.0.0.5")}) {
		t.Errorf("InternalIPs = %v, want 10.0.0.5", ips)
	}
	l := limits(cfg)
	if l.Source != "node class v100" || !slices.Equal(l.NICs, []string{"mlx5_0"}) || !slices.Equal(l.Modes, []api.Mode{api.ModeMove}) {
		t.Errorf("limits = %+v, want node class v100's", l)
	}
	// Without the Node, classes stop raild (it would serve another
	// class's NICs); without classes it is only a warning.
	cfg.NodeName = "gone"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readNode(ctx, cfg, clients, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), `nodeClasses: read node "gone"`) {
		t.Errorf("classes without the Node: %v", err)
	}
	cfg.NodeClasses = nil
	if ips, err := readNode(ctx, cfg, clients, slog.New(slog.DiscardHandler)); err != nil || ips != nil {
		t.Errorf("no classes, no Node: %v, %v; want neither", ips, err)
	}
}

func TestProtectNodeNICsNamesABadShare(t *testing.T) {
	m := &topology.Machine{NICs: []topology.NIC{{Name: "mlx5_0", PCI: "0000:19:00.0", Netdev: "rp-none0", NUMA: -1}}}
	inv, err := inventory.New("", func(string) (*topology.Machine, error) { return m, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{AllowProtectedNICs: []string{"mlx5_0", "mlx5_9"}, NodeClass: "v100"}
	err = protectNodeNICs(inv, cfg, nil, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), `allowProtectedNICs[1] (node class v100) "mlx5_9": not an RDMA device on this node`) {
		t.Fatalf("got %v", err)
	}
	cfg.AllowProtectedNICs = []string{"0000:19:00.0"}
	if err := protectNodeNICs(inv, cfg, nil, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
}
