// Package harness runs Rail end to end on this kernel, inside namespaces
// it creates: a simulated GPU node (a fake sysfs root written by fakesys),
// stand-in NIC netdevs (veth ends whose peers sit on a bridge in a
// "fabric" netns), raild as a real process in the node netns, the real
// rail and upstream CNI plugins exec'd by libcni from the node netns, and
// one netns per pod. It never touches the host's own interfaces: every
// link, address and route it makes lives in a namespace it created, and
// Close removes them all.
//
// It is shared by the root integration tests (integration/netns) and the
// demo (integration/cmd/rail-demo), so it returns errors instead of taking
// a testing.TB.
package harness
