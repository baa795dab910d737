package nri

import (
	"log/slog"
	"time"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/daemon/metrics"
	"github.com/railcni/rail/daemon/podinfo"
)

// The hooks the plugin implements, as metrics and logs name them.
const (
	hookRunPodSandbox      = "RunPodSandbox"
	hookCreateContainer    = "CreateContainer"
	hookStopPodSandbox     = "StopPodSandbox"
	hookRemovePodSandbox   = "RemovePodSandbox"
	hookSynchronize        = "Synchronize"
	hookPostStartContainer = "PostStartContainer"
	hookStopContainer      = "StopContainer"
)

// hookMetrics looks up each hook's instruments once (nil calls: not
// measured).
func hookMetrics(calls *metrics.Calls) map[string]*metrics.Call {
	out := map[string]*metrics.Call{}
	for _, h := range []string{hookRunPodSandbox, hookCreateContainer, hookStopPodSandbox, hookRemovePodSandbox, hookSynchronize, hookPostStartContainer, hookStopContainer} {
		out[h] = calls.Call(h)
	}
	return out
}

// hookCall is one call of an NRI hook: it reads one node table, logs with
// one logger that carries the pod (and the container), and is counted and
// timed when it ends. Hooks never fail the runtime's call: what went wrong
// is logged and counted with result "error".
type hookCall struct {
	p     *Plugin
	hook  string
	start time.Time
	pod   *nriapi.PodSandbox
	ctr   *nriapi.Container // CreateContainer only
	lg    *slog.Logger      // built on first use: most calls log nothing
	tbl   *nodeTables       // read on first use
	dra   []podinfo.DRANIC  // CreateContainer: the container's DRA NICs
}

func (p *Plugin) begin(hook string, pod *nriapi.PodSandbox, ctr *nriapi.Container) hookCall {
	return hookCall{p: p, hook: hook, start: time.Now(), pod: pod, ctr: ctr}
}

// log is the call's logger: the hook, the pod (namespace/name) and its
// sandbox, and the container on CreateContainer.
func (c *hookCall) log() *slog.Logger {
	if c.lg != nil {
		return c.lg
	}
	attrs := make([]any, 0, 8)
	attrs = append(attrs, "hook", c.hook)
	if c.pod != nil {
		attrs = append(attrs, "pod", c.pod.GetNamespace()+"/"+c.pod.GetName(), "sandbox", c.pod.GetId())
	}
	if c.ctr != nil {
		attrs = append(attrs, "container", c.ctr.GetName())
	}
	c.lg = c.p.log.With(attrs...)
	return c.lg
}

// node is the node's tables as this call reads them, the same for the
// whole call.
func (c *hookCall) node() *nodeTables {
	if c.tbl == nil {
		c.tbl = c.p.tables()
	}
	return c.tbl
}

// end counts and times the call; err is what went wrong (nil: nothing).
func (c *hookCall) end(err error) {
	if err != nil {
		c.log().Error(c.hook+" failed", "error", err)
	}
	c.p.hooks[c.hook].Observe(c.start, err)
}
