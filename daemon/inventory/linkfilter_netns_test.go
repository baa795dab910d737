package inventory

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/railcni/rail/daemon/linkfilter"
)

// recorder reads a NetlinkLinks source and keeps every event's link name
// (a Gone one with a "-" before it).
type recorder struct {
	src *NetlinkLinks
	mu  sync.Mutex
	got []string
}

func record(t *testing.T, ns netns.NsHandle) *recorder {
	t.Helper()
	src, err := LinkEvents(ns)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{src: src}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		src.Run(ctx, func(ev LinkEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			name := ev.Name
			if ev.Gone {
				name = "-" + name
			}
			r.got = append(r.got, name)
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// until waits for an event of marker and returns the events before it,
// taking them and it off the record.
func (r *recorder) until(t *testing.T, marker string) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a speed claim
	for time.Now().Before(deadline) {
		r.mu.Lock()
		if i := slices.Index(r.got, marker); i >= 0 {
			before := slices.Clone(r.got[:i])
			r.got = r.got[i+1:]
			r.mu.Unlock()
			return before
		}
		r.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("no event of %s among %v", marker, r.got)
	return nil
}

// TestKernelFilterDrops: the kernel filter on a real socket, against the
// kernel's own link messages, beside an unfiltered socket that shows what
// the kernel sent. Each step is followed by a change of a watched link
// (the marker): what the filtered socket read before the marker is what
// the filter let through of the step. ifi_change is all ones only for a
// link registered in the netns or moved into it: a rename or up/down of a
// link nobody watches is dropped.
func TestKernelFilterDrops(t *testing.T) {
	ns, h := testNetns(t)
	podNS, podH := namedNetns(t, fmt.Sprintf("ry-inv-%d-kpod", os.Getpid()))
	base := fmt.Sprintf("rykf%d", os.Getpid()%100000)
	// veths whose peers sit in the pod: this kernel may have no dummy links
	outside := func(name, peer string) *netlink.Veth {
		return &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peer, PeerNamespace: netlink.NsFd(int(podNS))}
	}
	marker, nic := outside(base+"mk", base+"mkp"), outside(base+"n", base+"np")
	must(t, h.LinkAdd(marker))
	must(t, h.LinkAdd(nic))
	all, filtered := record(t, ns), record(t, ns)
	index := func(name string) int {
		l, err := h.LinkByName(name)
		must(t, err)
		return l.Attrs().Index
	}
	mtu := 1500 // the marker's
	for _, parents := range []bool{false, true} {
		awaited, renamed := base+"aw", fmt.Sprintf("%sn%v", base, parents)
		w := linkfilter.List{Indexes: []int{index(marker.Name), index(nic.Name)}, Names: []string{awaited}, Parents: parents}
		if on, err := filtered.src.Watch(w); err != nil || !on {
			t.Fatalf("filter set %v: %v", on, err)
		}
		toggle := func() { // one event, sent at once (no link watch later)
			mtu = 2900 - mtu
			must(t, h.LinkSetMTU(marker, mtu))
		}
		veth := outside(base+"v", base+"p")
		mv := netlink.NewLinkAttrs()
		mv.Name, mv.ParentIndex = base+"mv", index(nic.Name)
		mvUp := netlink.NewLinkAttrs()
		mvUp.Name, mvUp.ParentIndex, mvUp.Flags = base+"mu", index(nic.Name), net.FlagUp
		steps := []struct {
			name   string
			do     func()
			sent   []string // the kernel's events of the step (unfiltered)
			passed []string // those the filter let through
		}{
			{"a veth made (its peer in a pod)", func() { must(t, h.LinkAdd(veth)) },
				[]string{veth.Name}, map[bool][]string{false: {veth.Name}, true: nil}[parents]},
			{"the veth set up", func() { must(t, h.LinkSetUp(veth)) }, []string{veth.Name}, nil},
			{"the veth renamed", func() { must(t, h.LinkSetName(veth, base+"r")); veth.Name = base + "r" }, []string{base + "r"}, nil},
			{"the veth deleted", func() { must(t, h.LinkDel(veth)) }, []string{"-" + base + "r"}, nil},
			{"a link moved in from a pod", func() {
				must(t, podH.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: base + "in"}, PeerName: base + "inp"}))
				moved, err := podH.LinkByName(base + "in")
				must(t, err)
				must(t, podH.LinkSetNsFd(moved, int(ns)))
			}, []string{base + "in"}, map[bool][]string{false: {base + "in"}, true: nil}[parents]},
			{"that link moved out", func() {
				l, err := h.LinkByName(base + "in")
				must(t, err)
				must(t, h.LinkSetNsFd(l, int(podNS)))
				moved, err := podH.LinkByName(base + "in")
				must(t, err)
				must(t, podH.LinkDel(moved))
			}, []string{"-" + base + "in"}, nil},
			{"a link of an awaited name made", func() { must(t, h.LinkAdd(outside(awaited, awaited+"p"))) },
				[]string{awaited}, []string{awaited}},
			{"a macvlan made on the watched NIC, down", func() { must(t, h.LinkAdd(&netlink.Macvlan{LinkAttrs: mv, Mode: netlink.MACVLAN_MODE_BRIDGE})) },
				[]string{mv.Name}, map[bool][]string{false: {mv.Name, nic.Name}, true: {nic.Name}}[parents]}, // the NIC's upper device changed
			{"the macvlan set up, and down again", func() { // down before its carrier's event, which would come later
				must(t, h.LinkSetUp(&netlink.Macvlan{LinkAttrs: mv}))
				must(t, h.LinkSetDown(&netlink.Macvlan{LinkAttrs: mv}))
			}, []string{mv.Name}, []string{mv.Name}},
			{"a macvlan made up on the watched NIC, and deleted", func() {
				up := &netlink.Macvlan{LinkAttrs: mvUp, Mode: netlink.MACVLAN_MODE_BRIDGE}
				must(t, h.LinkAdd(up))
				must(t, h.LinkDel(up)) // before its carrier's event, which would come later
			}, []string{"-" + mvUp.Name, mvUp.Name}, []string{mvUp.Name, nic.Name}}, // and the NIC's upper device changed
			{"the watched NIC's MTU changed", func() { must(t, h.LinkSetMTU(nic, map[bool]int{false: 1300, true: 1200}[parents])) }, []string{nic.Name}, []string{nic.Name}},
			{"the watched NIC renamed", func() { must(t, h.LinkSetName(nic, renamed)); nic.Name = renamed },
				[]string{renamed}, []string{renamed}},
		}
		for _, step := range steps {
			step.do()
			toggle()
			sent := slices.DeleteFunc(all.until(t, marker.Name), func(n string) bool { return !slices.Contains(step.sent, n) })
			passed := filtered.until(t, marker.Name)
			slices.Sort(sent)
			if !slices.Equal(slices.Compact(sent), step.sent) {
				t.Fatalf("parents %v, %s: the kernel sent %v, want events of %v", parents, step.name, sent, step.sent)
			}
			if slices.Sort(passed); !slices.Equal(slices.Compact(passed), step.passed) {
				t.Errorf("parents %v, %s: the filter passed %v, want %v", parents, step.name, passed, step.passed)
			}
		}
		// this round's links go, for the next
		for _, name := range []string{awaited, mv.Name} {
			l, err := h.LinkByName(name)
			must(t, err)
			must(t, h.LinkDel(l))
		}
		toggle()
		all.until(t, marker.Name)
		filtered.until(t, marker.Name)
	}
}
