package readiness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/api"
)

// TestDeviceNodesJudgedInContainerRoot: the device-nodes check judges the
// node the container would open, resolving links inside the container's
// root: a link out of it (absolute, or through "..") to a node on raild's
// side is not the device, a link that stays inside it to the real node is.
func TestDeviceNodesJudgedInContainerRoot(t *testing.T) {
	uverbs := Device{Path: "/dev/infiniband/uverbs0", Major: 231, Minor: 192}
	tests := []struct {
		name string
		// link is uverbs0's target in the container ("" for the node
		// itself); host: a node with the injected numbers at the target as
		// seen from raild's root; inside: that node at the target inside
		// the container's root.
		link   string
		host   bool
		inside string
		want   api.CheckStatus
	}{
		{name: "the node itself", want: api.CheckPass},
		{name: "absolute link to a host node", link: "HOST/uverbs0", host: true, want: api.CheckFail},
		{name: "absolute link to /dev/null", link: "/dev/null", want: api.CheckFail},
		{name: "dot-dot link out of the root", link: "../../../../../../../../../..HOST/uverbs0", host: true, want: api.CheckFail},
		{name: "absolute link inside the root", link: "/devices/uverbs0", inside: "devices/uverbs0", want: api.CheckPass},
		{name: "relative link inside the root", link: "../../devices/uverbs0", inside: "devices/uverbs0", want: api.CheckPass},
		{name: "dot-dot at the root stays there", link: "../../../../../devices/uverbs0", inside: "devices/uverbs0", want: api.CheckPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := newFakeProc(t)
			host := t.TempDir()
			if tt.host {
				mknod(t, filepath.Join(host, "uverbs0"), uverbs)
			}
			proc.process(100, limitsFile("unlimited", "unlimited"), nil)
			root := filepath.Join(proc.root, "100/root")
			if tt.inside != "" {
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, tt.inside)), 0o755))
				mknod(t, filepath.Join(root, tt.inside), uverbs)
			}
			node := filepath.Join(root, uverbs.Path)
			if tt.link == "" {
				mknod(t, node, uverbs)
			} else {
				must(t, os.Symlink(strings.ReplaceAll(tt.link, "HOST", host), node))
			}
			got := checker(t, machine(t, "lab-1x1"), proc.root).container(Container{Name: "app", Pid: 100, Start: proc.start(100), Devices: []Device{uverbs}})
			if len(got) != 1 || got[0].Name != checkDevices || got[0].Status != tt.want {
				t.Fatalf("checks %+v; want device-nodes %s", got, tt.want)
			}
		})
	}
}

func mknod(t *testing.T, path string, d Device) {
	t.Helper()
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(uint32(d.Major), uint32(d.Minor)))); err != nil {
		t.Skipf("mknod %s (needs root): %v", path, err)
	}
}

// TestNetnsNotANamespace: a rail whose netns path names a FIFO (a pod's
// netns replaced) fails its interface check as gone; the check never
// opens the FIFO (it waited for a writer forever, and raild's loop with it).
func TestNetnsNotANamespace(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "netns")
	must(t, unix.Mkfifo(fifo, 0o600))
	got := checker(t, machine(t, "lab-1x1"), t.TempDir()).inPod(Rail{Netns: fifo, IfName: "rail0"})
	if len(got) != 1 || got[0].Status != api.CheckFail || got[0].Reason != ReasonNetnsGone || !strings.Contains(got[0].Message, "not a network namespace") {
		t.Fatalf("checks %+v; want %s naming it no netns", got, ReasonNetnsGone)
	}
}
