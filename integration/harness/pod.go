package harness

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"

	"github.com/containernetworking/cni/libcni"
)

// Pod is a pod sandbox as a runtime sees it: a netns, a sandbox ID and the
// keys and annotations it passes to CNI.
type Pod struct {
	Namespace, Name, UID string
	Sandbox              string // the CNI container ID
	IfName               string // CNI_IFNAME of the primary (eth0)
	Annotations          map[string]string
	Netns                *NetNS
	// CNIArgs are extra K8S-style CNI_ARGS pairs appended to the pod keys.
	CNIArgs [][2]string

	servers []*PodServer
}

// RuntimeConf is what the runtime gives libcni for this pod: K8S_POD_*
// in CNI_ARGS and the annotations through the capability.
func (p *Pod) RuntimeConf() *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{
		ContainerID: p.Sandbox,
		IfName:      p.IfName,
		Args: append([][2]string{
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", p.Namespace},
			{"K8S_POD_NAME", p.Name},
			{"K8S_POD_INFRA_CONTAINER_ID", p.Sandbox},
			{"K8S_POD_UID", p.UID},
		}, p.CNIArgs...),
		CapabilityArgs: map[string]any{AnnotationsCapability: maps.Clone(p.Annotations)},
	}
	if p.Netns != nil {
		rt.NetNS = p.Netns.Path
	}
	return rt
}

// NewPod creates a pod netns named after the node and the pod, with a
// fresh sandbox ID and UID.
func (n *Node) NewPod(namespace, name string, annotations map[string]string) (*Pod, error) {
	sandbox, err := randomHex(32)
	if err != nil {
		return nil, err
	}
	uid, err := randomHex(16)
	if err != nil {
		return nil, err
	}
	netns, err := CreateNetNS(fmt.Sprintf("%s-%s-%s", n.ID, name, sandbox[:6]))
	if err != nil {
		return nil, err
	}
	p := &Pod{Namespace: namespace, Name: name, UID: uid, Sandbox: sandbox, IfName: "eth0",
		Annotations: annotations, Netns: netns}
	n.mu.Lock()
	n.pods = append(n.pods, p)
	n.mu.Unlock()
	return p, nil
}

// DeletePodNetns deletes a pod's netns the way a runtime does when it
// tears a sandbox down (with or without DEL first). Stand-in NICs still
// inside are refunded to the node netns as the kernel refunds physical
// NICs (see Fabric.refund).
func (n *Node) DeletePodNetns(p *Pod) error {
	if err := p.closeServers(); err != nil {
		return err
	}
	return n.Fabric.DeleteNetns(p.Netns)
}

func randomHex(bytes int) (string, error) {
	b := make([]byte, bytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
