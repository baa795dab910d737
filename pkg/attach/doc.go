// Package attach does the netlink work that gives a pod one NIC interface,
// and undoes it exactly.
//
// Three modes (Spec.Mode):
//
//   - move: the NIC's host netdev itself moves into the pod netns, renamed to
//     Spec.Name, in one RTM_NEWLINK message (IFLA_NET_NS_FD + IFLA_IFNAME +
//     IFLA_IFALIAS + IFLA_MTU). Its alias records what Detach needs to put it
//     back: "rail:<host name>:name=<pod name>:mtu=<mtu>:up=<0|1>", plus
//     ":rdma=<dev>" and ":table=<n>" when they apply. The alias
//     is the only state that lives with the device, so Detach finds the
//     device by it even after it was renamed inside the pod, and even after
//     the kernel handed it back to the host when the pod netns died.
//   - macvlan: a macvlan child of Spec.Parent, created directly inside the
//     pod netns (one RTM_NEWLINK with IFLA_NET_NS_FD).
//   - vf: an SR-IOV VF's netdev moves into the pod as in move mode, after
//     what Spec.VF.Config asks is set through its PF (vfpf.Control: admin
//     MAC, which the VF's netdev takes too, by pkg/vfnetdev's MAC step,
//     then pkg/vfpf's steps, VLAN/QoS/protocol, spoofchk, link state,
//     rates, trust last, each step's inverse on the undo list). Each setting's old value is recorded in
//     the alias (":pf=<PF>:vf=<index>" and one key per changed setting) and
//     restored on Detach before the VF leaves the pod, trust first; a
//     setting not asked for is never touched, so one the driver does not
//     support fails only the ADDs that ask for it. A VF the kernel handed
//     back from a dead pod is reset from its alias by Detach, or by the
//     next Attach that finds it so. An InfiniBand VF gets its node and
//     port GUID (VF.GUID) last, by pkg/vfnetdev's GUID step: the VF takes
//     them only when its driver is rebound through sysfs, which gives it a new netdev, found by the
//     VF's PCI address and given the old one's name, MTU and state; the
//     old GUIDs (":ng=", ":pg=") are set back, with a rebind, once the VF
//     is back in the host. Its RDMA device (exclusive RDMA netns mode)
//     moves before its netdev and back after it, since the kernel makes
//     the IPoIB netdev anew in the host when the device changes netns.
//   - ipoib: an IPoIB child (P_Key, datagram/connected) of an InfiniBand
//     parent, created the same way; a parent that is not InfiniBand is
//     refused with a message that says what it is and what to use instead.
//
// Children carry the alias "rail:<parent>:name=<pod name>:kind=<mode>"
// (plus ":table=<n>").
//
// On every interface: the addresses (IPv6 without DAD), only the routes the
// Spec lists (never a default route unless listed), optionally a policy
// routing table with one "from <addr> lookup <table>" rule per address,
// optional arp_ignore=1/arp_announce=2 (written to /proc/sys inside the pod
// netns), the MTU, and the link up.
//
// Every step pushes its inverse on an undo list: a failure half-way leaves
// host and pod as they were. AttachAll attaches all the interfaces of a
// plan as one transaction, in one session of the two namespaces: each
// interface it created is one more step on the list, so a failure at
// interface k undoes 0..k-1 too, and it says which interfaces it created
// and which it found already attached (a repeated ADD), so its caller
// undoes only its own. LockPod serialises callers working on one pod.
// Detach is idempotent: a pod netns that is gone or empty, a link that is
// gone, a second call, all return nil.
//
// The host netns is always the caller's (the calling thread's) netns. The
// package never logs.
package attach
