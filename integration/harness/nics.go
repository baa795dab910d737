package harness

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vishvananda/netlink"
)

// fabricBridge joins the stand-in NICs' peers in the fabric netns, so the
// rail interfaces of different pods can reach each other.
const fabricBridge = "fabric0"

// StandIn is a veth end in the node netns standing in for one NIC's netdev.
// Its peer sits on the fabric bridge.
type StandIn struct {
	RDMA      string // the fake machine's RDMA device (mlx5_0)
	Name      string // netdev name in the node netns
	LinkLayer string // what the fake machine says: InfiniBand or Ethernet
	MTU       int
	Up        bool
	MAC       net.HardwareAddr
	Peer      string // peer name in the fabric netns
}

// Fabric owns the stand-in NICs and the bridge joining their peers.
type Fabric struct {
	node, fabric *NetNS
	nics         []*StandIn
}

// NewFabric creates the bridge in the fabric netns.
func NewFabric(node, fabric *NetNS) (*Fabric, error) {
	h, err := fabric.Netlink()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: fabricBridge}}
	if err := h.LinkAdd(br); err != nil {
		return nil, fmt.Errorf("create bridge %s in %s: %w", fabricBridge, fabric.Name, err)
	}
	if err := h.LinkSetUp(br); err != nil {
		return nil, fmt.Errorf("set bridge %s up: %w", fabricBridge, err)
	}
	return &Fabric{node: node, fabric: fabric}, nil
}

// NICs lists the stand-ins in creation order.
func (f *Fabric) NICs() []*StandIn { return f.nics }

// Add creates a stand-in: name in the node netns with mtu and up state,
// its peer on the bridge.
func (f *Fabric) Add(rdma, name, linkLayer string, mtu int, up bool) (*StandIn, error) {
	s := &StandIn{RDMA: rdma, Name: name, LinkLayer: linkLayer, MTU: mtu, Up: up,
		Peer: fmt.Sprintf("f%d-%s", len(f.nics), name)}
	if len(s.Peer) > 15 {
		s.Peer = s.Peer[:15]
	}
	mac, err := f.create(s, name, "", mtu, up, nil)
	if err != nil {
		return nil, err
	}
	s.MAC = mac
	f.nics = append(f.nics, s)
	return s, nil
}

// create makes the veth pair; with mac set it reuses that address.
func (f *Fabric) create(s *StandIn, name, alias string, mtu int, up bool, mac net.HardwareAddr) (net.HardwareAddr, error) {
	node, err := f.node.Netlink()
	if err != nil {
		return nil, err
	}
	defer node.Close()
	fabricNS, err := f.fabric.Handle()
	if err != nil {
		return nil, err
	}
	defer fabricNS.Close()
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: name, MTU: mtu, HardwareAddr: mac},
		PeerName:      s.Peer,
		PeerNamespace: netlink.NsFd(int(fabricNS)),
		PeerMTU:       uint32(mtu),
	}
	if err := node.LinkAdd(veth); err != nil {
		return nil, fmt.Errorf("create stand-in %s for %s: %w", name, s.RDMA, err)
	}
	link, err := node.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("find stand-in %s: %w", name, err)
	}
	if err := f.configure(node, link, alias, up); err != nil {
		return nil, err
	}
	if err := f.plugPeer(s.Peer); err != nil {
		return nil, err
	}
	return link.Attrs().HardwareAddr, nil
}

func (f *Fabric) configure(node *netlink.Handle, link netlink.Link, alias string, up bool) error {
	name := link.Attrs().Name
	if alias != "" {
		if err := node.LinkSetAlias(link, alias); err != nil {
			return fmt.Errorf("set alias of %s: %w", name, err)
		}
	}
	if up {
		if err := node.LinkSetUp(link); err != nil {
			return fmt.Errorf("set %s up: %w", name, err)
		}
	}
	return nil
}

func (f *Fabric) plugPeer(peer string) error {
	h, err := f.fabric.Netlink()
	if err != nil {
		return err
	}
	defer h.Close()
	link, err := h.LinkByName(peer)
	if err != nil {
		return fmt.Errorf("find fabric peer %s: %w", peer, err)
	}
	br, err := h.LinkByName(fabricBridge)
	if err != nil {
		return fmt.Errorf("find bridge %s: %w", fabricBridge, err)
	}
	if err := h.LinkSetMaster(link, br); err != nil {
		return fmt.Errorf("plug %s into %s: %w", peer, fabricBridge, err)
	}
	if err := h.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %s up: %w", peer, err)
	}
	return nil
}

// ByName returns the stand-in whose home name is name.
func (f *Fabric) ByName(name string) (*StandIn, bool) {
	for _, s := range f.nics {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// ByMAC returns the stand-in with this hardware address.
func (f *Fabric) ByMAC(mac net.HardwareAddr) (*StandIn, bool) {
	for _, s := range f.nics {
		if s.MAC.String() == mac.String() {
			return s, true
		}
	}
	return nil, false
}

// waitPeerGone waits until a deleted stand-in's fabric peer is gone.
func (f *Fabric) waitPeerGone(s *StandIn, timeout time.Duration) error {
	h, err := f.fabric.Netlink()
	if err != nil {
		return err
	}
	defer h.Close()
	deadline := time.Now().Add(timeout)
	for {
		_, err := h.LinkByName(s.Peer)
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("stand-in %s: its fabric peer %s is still there %s after the stand-in was deleted", s.Name, s.Peer, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
