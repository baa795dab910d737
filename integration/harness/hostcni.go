package harness

import (
	"io"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/version"
)

// hostExec runs plugins as libcni's default does, with their stderr kept.
type hostExec struct {
	*invoke.RawExec
	version.PluginDecoder
}

// HostCNI runs conflists through libcni in the caller's own netns, on the
// machine's real devices (a rig's guest, where the NICs are PCI functions
// and cannot live in a simulated node's netns).
type HostCNI struct {
	cni  *libcni.CNIConfig
	exec invoke.Exec
}

// NewHostCNI finds plugins in paths and caches results in cacheDir;
// plugins' stderr goes to stderr (nil: dropped).
func NewHostCNI(paths []string, cacheDir string, stderr io.Writer) *HostCNI {
	exec := &hostExec{RawExec: &invoke.RawExec{Stderr: stderr}}
	return &HostCNI{cni: libcni.NewCNIConfigWithCacheDir(paths, cacheDir, exec), exec: exec}
}

// Network builds a conflist run in the caller's netns.
func (h *HostCNI) Network(name, cniVersion string, plugins ...map[string]any) (*Network, error) {
	return newNetwork(h.cni, h.exec, name, cniVersion, plugins)
}
