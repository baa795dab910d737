package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/inventory"
	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/daemon/nodenics"
	"github.com/railcni/rail/daemon/placement"
	"github.com/vishvananda/netns"
)

// nodeWait bounds how long raild waits at start for its Node when node
// classes need its labels (a DaemonSet pod may start before the API
// server answers).
const nodeWait = 30 * time.Second

// readNode reads raild's Node when it talks to the API server: its
// labels pick the node class, which overrides the config's keys, and its
// InternalIPs name the node's own address among the protected NICs'. With
// node classes, a Node that cannot be read stops raild (it would serve
// another class's NICs); without, it only costs that name.
func readNode(ctx context.Context, cfg *config.Config, clients *kubeclient.Clients, log *slog.Logger) ([]netip.Addr, error) {
	if clients == nil {
		return nil, nil
	}
	classes := len(cfg.NodeClasses) > 0
	node, err := getNode(ctx, clients, cfg.NodeName, classes)
	switch {
	case err != nil && classes:
		return nil, fmt.Errorf("nodeClasses: read node %q for its labels: %w", cfg.NodeName, err)
	case err != nil:
		log.Warn("node not read: the node's own NICs are found by their addresses and routes alone", "node", cfg.NodeName, "error", err)
		return nil, nil
	case classes:
		class, err := cfg.ApplyNodeClass(node.Labels)
		if err != nil {
			return nil, err
		}
		if class == "" {
			log.Info("no node class matches this node: the config's top-level keys apply", "node", cfg.NodeName)
		} else {
			log.Info("node class", "node", cfg.NodeName, "class", class)
		}
	}
	return internalIPs(node), nil
}

func getNode(ctx context.Context, clients *kubeclient.Clients, name string, patient bool) (*corev1.Node, error) {
	wait := time.Duration(0)
	if patient {
		wait = nodeWait
	}
	deadline := time.Now().Add(wait)
	for {
		node, err := clients.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil || time.Now().After(deadline) {
			return node, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

func internalIPs(node *corev1.Node) []netip.Addr {
	var out []netip.Addr
	for _, a := range node.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil {
			out = append(out, ip)
		}
	}
	return out
}

// protectNodeNICs makes the inventory read the node's own NICs in the
// host netns (raild's), with the config's shared ones resolved to names,
// and logs them.
func protectNodeNICs(inv *inventory.Inventory, cfg *config.Config, nodeIPs []netip.Addr, log *slog.Logger) error {
	shared := map[string]bool{}
	for i, id := range cfg.AllowProtectedNICs {
		nics := inv.Machine().NICsByID(id)
		if len(nics) == 0 {
			return fmt.Errorf("allowProtectedNICs[%d]%s %q: not an RDMA device on this node: name a NIC (mlx5_4, mlx4_0:2) or its PCI address, "+
				"or give this kind of node a class of its own", i, classNote(cfg), id)
		}
		for _, n := range nics {
			shared[n.Name] = true
		}
	}
	if err := inv.SetProtector(nodenics.Reader{NS: netns.None(), NodeIPs: nodeIPs, Shared: shared}); err != nil {
		return err
	}
	if err := inv.Current().ProtectErr; err != nil {
		log.Warn("the node's own NICs: addresses and routes not read; sysfs alone protects them", "error", err)
	}
	for name, p := range inv.Protected() {
		log.Info("the node's own NIC", "nic", name, "why", p.Why(), "lag", p.LAG, "shared", p.Shared)
	}
	return nil
}

// limits are the NICs and modes this node serves.
func limits(cfg *config.Config) placement.Limits {
	source := "config"
	if cfg.NodeClass != "" {
		source = "node class " + cfg.NodeClass
	}
	return placement.Limits{NICs: cfg.NICs, Modes: cfg.Modes, Source: source, SoftRoCE: cfg.SoftRoCE}
}

func classNote(cfg *config.Config) string {
	if cfg.NodeClass == "" {
		return ""
	}
	return " (node class " + cfg.NodeClass + ")"
}
