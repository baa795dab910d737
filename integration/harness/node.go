package harness

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"

	"github.com/railcni/rail/integration/kubeletstub"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// Stand-in MTUs: what IPoIB and RoCE netdevs commonly carry, so a restore
// to 1500 would show.
const (
	InfiniBandMTU = 4092
	EthernetMTU   = 9000
)

// Bins says where the binaries are: raild, rail and rail-ipam in Rail, the
// upstream CNI plugins in Plugins.
type Bins struct {
	Rail, Plugins string
}

// NodeOptions describe a simulated node.
type NodeOptions struct {
	Machine string // fakesys machine name
	// Host, when not nil, describes the machine instead of a built-in one
	// (Machine then only names it).
	Host *fakesys.Host
	// NamePrefix starts the names of the node's namespaces and stand-in
	// links, so a caller can tell its own apart ("" gives "rail" for
	// namespaces and "rt" for links).
	NamePrefix string
	Bins       Bins
	// Pools for raild; nil gives one pool "rail" on 10.77.0.0/24.
	Pools []ipam.PoolConfig
	// Kubelet, when not nil, starts a PodResources stand-in with these
	// pods and points raild at it.
	Kubelet []kubeletstub.Pod
	// TopologyFile is an NCCL topology file for raild ("" for none).
	TopologyFile string
	// DownNICs are RDMA devices whose stand-in netdev starts down.
	DownNICs []string
	// PluginStderr receives what plugins print on stderr (nil: dropped).
	PluginStderr io.Writer
}

// Node is one simulated node: its netns, its fabric, its fake machine,
// raild and what pods were made on it.
type Node struct {
	ID      string // unique for this run: names netns, netdevs, files
	Dir     string // temp dir with the machine root, raild's files, CNI cache
	Netns   *NetNS
	Fabric  *Fabric
	Machine *Machine
	Raild   *Raild
	Kubelet *kubeletstub.Server
	CNI     *libcni.CNIConfig
	Bins    Bins

	fabricNetns *NetNS
	linkPrefix  string
	exec        invoke.Exec
	mu          sync.Mutex
	pods        []*Pod
	undo        []func() error
}

// NewNode builds a node: netns, stand-in NICs named as the fake machine
// says, the kubelet stand-in and raild. On error nothing is left behind.
func NewNode(opt NodeOptions) (_ *Node, retErr error) {
	if err := checkNamePrefix(opt.NamePrefix); err != nil {
		return nil, err
	}
	id, err := randomHex(3)
	if err != nil {
		return nil, err
	}
	n := &Node{ID: "rail-" + id, Bins: opt.Bins, linkPrefix: "rt" + id}
	if opt.NamePrefix != "" {
		n.ID, n.linkPrefix = opt.NamePrefix+"-"+id, opt.NamePrefix+id
	}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, n.Close())
		}
	}()
	if n.Dir, err = os.MkdirTemp("", n.ID+"-"); err != nil {
		return nil, fmt.Errorf("node dir: %w", err)
	}
	n.undo = append(n.undo, func() error { return os.RemoveAll(n.Dir) })
	steps := []func(NodeOptions) error{n.makeNamespaces, n.makeMachine, n.startKubelet, n.startRaild}
	for _, step := range steps {
		if err := step(opt); err != nil {
			return nil, err
		}
	}
	n.exec = &nsExec{RawExec: &invoke.RawExec{Stderr: opt.PluginStderr}, netns: n.Netns}
	n.CNI = libcni.NewCNIConfigWithCacheDir([]string{opt.Bins.Rail, opt.Bins.Plugins}, filepath.Join(n.Dir, "cni-cache"), n.exec)
	return n, nil
}

// maxNamePrefix keeps stand-in names (prefix, 6 hex digits, "n" and up to
// 3 digits) within the kernel's 15 characters.
const maxNamePrefix = 5

func checkNamePrefix(prefix string) error {
	valid := len(prefix) <= maxNamePrefix
	for _, r := range prefix {
		valid = valid && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}
	if !valid {
		return fmt.Errorf("NamePrefix %q: want at most %d lower-case letters or digits (it starts netns and link names)", prefix, maxNamePrefix)
	}
	return nil
}

func (n *Node) makeNamespaces(NodeOptions) error {
	var err error
	if n.Netns, err = CreateNetNS(n.ID + "-node"); err != nil {
		return err
	}
	n.undo = append(n.undo, n.Netns.Delete)
	// No duplicate address detection in the node netns: a link-local
	// address then gets its local route at once instead of a second or
	// two later, so snapshots taken right after a change are stable. (The
	// setting applies to devices created in or moved into the netns.)
	for _, key := range []string{"net/ipv6/conf/all/accept_dad", "net/ipv6/conf/default/accept_dad"} {
		if err := n.Netns.SetSysctl(key, "0"); err != nil {
			return err
		}
	}
	if n.fabricNetns, err = CreateNetNS(n.ID + "-fabric"); err != nil {
		return err
	}
	n.undo = append(n.undo, n.fabricNetns.Delete)
	n.Fabric, err = NewFabric(n.Netns, n.fabricNetns)
	return err
}

// makeMachine writes the fake root and creates a stand-in per netdev.
func (n *Node) makeMachine(opt NodeOptions) error {
	root := filepath.Join(n.Dir, "root")
	var m *Machine
	var err error
	if opt.Host != nil {
		m, err = WriteHost(root, opt.Machine, *opt.Host, n.linkPrefix)
	} else {
		m, err = WriteMachine(root, opt.Machine, n.linkPrefix)
	}
	if err != nil {
		return err
	}
	n.Machine = m
	for _, nic := range m.Spec.NICs {
		name, ok := m.Netdevs[nic.Name]
		if !ok {
			continue
		}
		mtu := EthernetMTU
		if nic.LinkLayer == "InfiniBand" {
			mtu = InfiniBandMTU
		}
		if _, err := n.Fabric.Add(nic.Name, name, nic.LinkLayer, mtu, !slices.Contains(opt.DownNICs, nic.Name)); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) startKubelet(opt NodeOptions) error {
	if opt.Kubelet == nil {
		return nil
	}
	srv, err := kubeletstub.Start(filepath.Join(n.Dir, "kubelet", "pod-resources.sock"), opt.Kubelet)
	if err != nil {
		return err
	}
	n.Kubelet = srv
	n.undo = append(n.undo, func() error { srv.Stop(); return nil })
	return nil
}

func (n *Node) startRaild(opt NodeOptions) error {
	pools := opt.Pools
	if pools == nil {
		pools = []ipam.PoolConfig{{Name: "rail", Subnet: "10.77.0.0/24"}}
	}
	ro := RaildOptions{
		Bin: filepath.Join(opt.Bins.Rail, "raild"), Dir: n.Dir, Root: n.Machine.Root, NodeName: n.ID,
		Config: DaemonConfig{Cooldown: "0s", Pools: pools, TopologyFile: opt.TopologyFile}, Netns: n.Netns,
	}
	if n.Kubelet != nil {
		ro.PodResources = n.Kubelet.Socket()
	}
	r, err := StartRaild(ro)
	if r != nil {
		n.Raild = r
		n.undo = append(n.undo, r.Stop)
	}
	return err
}

// Network builds a conflist run in this node's netns.
func (n *Node) Network(name, cniVersion string, plugins ...map[string]any) (*Network, error) {
	return newNetwork(n.CNI, n.exec, name, cniVersion, plugins)
}

// Snapshot reads the node netns.
func (n *Node) Snapshot() (Snapshot, error) { return TakeSnapshot(n.Netns) }

// Close deletes the pods' namespaces, stops raild and the kubelet
// stand-in, deletes the node and fabric namespaces (and so every link in
// them) and removes the node's files.
func (n *Node) Close() error {
	n.mu.Lock()
	pods := n.pods
	n.pods = nil
	n.mu.Unlock()
	var errs []error
	for _, p := range pods {
		errs = append(errs, p.closeServers(), p.Netns.Delete())
	}
	for i := len(n.undo) - 1; i >= 0; i-- {
		errs = append(errs, n.undo[i]())
	}
	n.undo = nil
	return errors.Join(errs...)
}
