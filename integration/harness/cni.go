package harness

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"
)

// AnnotationsCapability is the runtime capability that carries pod
// annotations to plugins that declare it.
const AnnotationsCapability = "io.kubernetes.cri.pod-annotations"

// nsExec runs CNI plugins from a thread inside a netns, as a runtime on
// that node would: the plugin process is born in the node netns.
type nsExec struct {
	*invoke.RawExec
	version.PluginDecoder
	netns *NetNS
}

// ExecPlugin runs one plugin inside the node netns.
func (e *nsExec) ExecPlugin(ctx context.Context, path string, stdin []byte, environ []string) ([]byte, error) {
	var out []byte
	err := e.netns.Do(func() error {
		var err error
		out, err = e.RawExec.ExecPlugin(ctx, path, stdin, environ)
		return err
	})
	return out, err
}

// Network is one conflist, run by libcni in the node netns.
type Network struct {
	List *libcni.NetworkConfigList
	cni  *libcni.CNIConfig
	exec invoke.Exec
}

// Add runs ADD of the whole list for pod's primary interface (eth0).
func (n *Network) Add(ctx context.Context, pod *Pod) (types.Result, error) {
	return n.cni.AddNetworkList(ctx, n.List, pod.RuntimeConf())
}

// AddRuntime runs ADD of the whole list with the caller's runtime config
// (e.g. a netns or CNI_IFNAME other than the pod's).
func (n *Network) AddRuntime(ctx context.Context, rt *libcni.RuntimeConf) (types.Result, error) {
	return n.cni.AddNetworkList(ctx, n.List, rt)
}

// Check runs CHECK of the whole list.
func (n *Network) Check(ctx context.Context, pod *Pod) error {
	return n.cni.CheckNetworkList(ctx, n.List, pod.RuntimeConf())
}

// CheckPlugin runs CHECK of the list's plugin of that type alone, with the
// list's cached result as prevResult, as CheckNetworkList runs each
// plugin. (Upstream ptp and bridge CHECK every IP of the final result on
// their own interface, so a whole-list CHECK fails in them as soon as a
// chained plugin adds an interface with an address.)
func (n *Network) CheckPlugin(ctx context.Context, pod *Pod, pluginType string) error {
	for _, p := range n.List.Plugins {
		if p.Network.Type != pluginType {
			continue
		}
		conf, err := libcni.InjectConf(p, map[string]any{"name": n.List.Name, "cniVersion": n.List.CNIVersion})
		if err != nil {
			return fmt.Errorf("conf of %s: %w", pluginType, err)
		}
		return n.cni.CheckNetwork(ctx, conf, pod.RuntimeConf())
	}
	return fmt.Errorf("conflist %s has no %s plugin", n.List.Name, pluginType)
}

// Del runs DEL of the whole list with the pod's netns.
func (n *Network) Del(ctx context.Context, pod *Pod) error {
	return n.DelRuntime(ctx, pod.RuntimeConf())
}

// DelRuntime runs DEL with a runtime config the caller changed (empty
// CNI_NETNS, an unknown container, ...).
func (n *Network) DelRuntime(ctx context.Context, rt *libcni.RuntimeConf) error {
	return n.cni.DelNetworkList(ctx, n.List, rt)
}

// GC runs GC of the list with the attachments the runtime still knows.
func (n *Network) GC(ctx context.Context, valid ...*Pod) error {
	args := &libcni.GCArgs{ValidAttachments: []types.GCAttachment{}}
	for _, p := range valid {
		args.ValidAttachments = append(args.ValidAttachments, types.GCAttachment{ContainerID: p.Sandbox, IfName: p.IfName})
	}
	return n.cni.GCNetworkList(ctx, n.List, args)
}

// WithCacheDir is the same network run by a runtime whose CNI cache is dir
// (an empty dir: a runtime that lost its cache, so GC cannot DEL the stale
// attachments itself and leaves them to the plugins' GC).
func (n *Network) WithCacheDir(dir string) *Network {
	return &Network{List: n.List, cni: libcni.NewCNIConfigWithCacheDir(n.cni.Path, dir, n.exec), exec: n.exec}
}

// Status runs STATUS of the list.
func (n *Network) Status(ctx context.Context) error {
	return n.cni.GetStatusNetworkList(ctx, n.List)
}

// CachedResult is the result libcni cached at ADD.
func (n *Network) CachedResult(pod *Pod) (types.Result, error) {
	return n.cni.GetNetworkListCachedResult(n.List, pod.RuntimeConf())
}

// newNetwork builds a conflist from plugin configs.
func newNetwork(cni *libcni.CNIConfig, exec invoke.Exec, name, cniVersion string, plugins []map[string]any) (*Network, error) {
	raw, err := json.Marshal(map[string]any{"cniVersion": cniVersion, "name": name, "plugins": plugins})
	if err != nil {
		return nil, fmt.Errorf("encode conflist %s: %w", name, err)
	}
	list, err := libcni.NetworkConfFromBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("conflist %s: %w", name, err)
	}
	return &Network{List: list, cni: cni, exec: exec}, nil
}

// ToCurrent converts a result of any version to the current type.
func ToCurrent(r types.Result) (*current.Result, error) {
	res, err := current.NewResultFromResult(r)
	if err != nil {
		return nil, fmt.Errorf("convert %s result: %w", r.Version(), err)
	}
	return res, nil
}
