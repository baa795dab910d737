package nri

import (
	"slices"
	"strings"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/daemon/podinfo"
	"github.com/railcni/rail/pkg/topology"
)

// DRA NICs: a NIC driver (DRANet) moved the NIC into the pod and injects
// its device nodes; the plugin adds what the driver does not — memlock and
// the NCCL/UCX variables — for the containers whose claims hold the NIC.
// What a pod holds is asked of the kubelet when the pod starts (the same
// lookup as gpuAutoInject's) and kept in the DRAHeld table.

// startDRANICs turns DRA NIC completion on when the options allow it: a
// table, NIC drivers and a kubelet to ask.
func (p *Plugin) startDRANICs(opt Options) {
	if opt.DRAHeld == nil || opt.GPUs == nil || len(opt.GPUs.NICDrivers) == 0 {
		return
	}
	if !opt.GPUs.AsksKubelet() {
		p.log.Warn("DRA NIC drivers configured without the kubelet's PodResources socket: their pods are not completed",
			"drivers", opt.GPUs.NICDrivers)
		return
	}
	p.draHeld = opt.DRAHeld
	p.kubelet = newKubeletGPUs(opt.GPUs, p.holdDRANICs)
}

// holdDRANICs records what the kubelet says a starting pod holds.
func (p *Plugin) holdDRANICs(pod *nriapi.PodSandbox, byCtr map[string]podinfo.Held) {
	if p.draHeld == nil {
		return
	}
	nics := podinfo.UnionNICs(byCtr)
	p.draHeld.Set(pod.GetId(), podinfo.PodDRANICs{Namespace: pod.GetNamespace(), Name: pod.GetName(), UID: pod.GetUid(),
		Netns: podNetns(pod), GPUs: podinfo.UnionGPUs(byCtr), NICs: nics})
	if len(nics) > 0 {
		call := p.begin(hookRunPodSandbox, pod, nil)
		call.log().Info("pod holds RDMA NICs of a DRA NIC driver: completing its containers, never moving them", "nics", draNames(nics))
		p.warmDRAEnvs(&call, byCtr)
		p.notify(pod.GetId())
	}
}

// warmDRAEnvs works out, off the hook, the env of each set of DRA NICs a
// container of the pod holds, into the pod's record (when it has one:
// the pod was seen starting).
func (p *Plugin) warmDRAEnvs(call *hookCall, byCtr map[string]podinfo.Held) {
	rec := p.pods.get(call.pod.GetId())
	if rec == nil || !p.cfg.ncclEnv {
		return
	}
	for _, held := range byCtr {
		if key := draKey(held.NICs); key != "" && rec.dra.get(key) == nil {
			rec.dra.put(key, p.leaseEnv(call, rec, held.NICs))
		}
	}
}

// podNetns is the path of the pod's network namespace, as the runtime
// gives it in the sandbox's Linux namespaces ("" when it gives none).
func podNetns(pod *nriapi.PodSandbox) string {
	for _, ns := range pod.GetLinux().GetNamespaces() {
		if ns.GetType() == "network" {
			return ns.GetPath()
		}
	}
	return ""
}

// retainDRANICs drops the pods that are gone from the table (Synchronize).
func (p *Plugin) retainDRANICs(pods []*nriapi.PodSandbox) {
	if p.draHeld == nil {
		return
	}
	running := make(map[string]bool, len(pods))
	for _, pod := range pods {
		running[pod.GetId()] = true
	}
	p.draHeld.Retain(func(sandbox string) bool { return running[sandbox] })
}

// containerDRANICs is the DRA NICs the container's claims hold, as asked
// when its pod started; none when DRA NICs are not completed.
func (p *Plugin) containerDRANICs(call *hookCall) []podinfo.DRANIC {
	if p.draHeld == nil || p.kubelet == nil {
		return nil
	}
	nics, failed, err := p.kubelet.containerNICs(call.pod, call.ctr.GetName())
	if err != nil {
		call.log().Warn("DRA NICs unknown: the container is not completed for them", "error", err)
		return nil
	}
	for _, f := range failed {
		call.log().Warn("a DRA NIC of the container does not resolve: not completed", "device", f.ID, "error", f.Err)
	}
	return nics
}

// addDRA lists the DRA NICs for the environment, never their device nodes
// (the driver injects them).
func (in *injection) addDRA(devs *nodeDevices, nics []podinfo.DRANIC) {
	for _, n := range nics {
		nd, ok := devs.nics[n.NIC]
		if !ok {
			// the topology lost it (exclusive RDMA netns mode, moved): the
			// names from the record are all the environment needs
			t := topology.NIC{Name: n.NIC, Device: n.RDMADevice, Port: n.Port}
			nd = &nicDevices{name: n.NIC, device: n.RDMADevice, port: n.Port, hca: t.HCAName(), ucx: t.UCXName()}
		}
		in.nics = appendNIC(in.nics, nd)
	}
}

// driverDevices are the uverbs nodes the driver injects for the DRA NICs,
// each once (the ports of one RDMA device share it), with their numbers
// from the node's tables. A NIC the tables do not know (its device left
// the host's view) has no known node and is not listed.
func driverDevices(devs *nodeDevices, nics []podinfo.DRANIC) []DriverDeviceRecord {
	var out []DriverDeviceRecord
	for _, n := range nics {
		nd, ok := devs.nics[n.NIC]
		if !ok {
			continue
		}
		for _, d := range nd.devices {
			if !strings.HasPrefix(d.Path, deviceDir+"uverbs") ||
				slices.ContainsFunc(out, func(o DriverDeviceRecord) bool { return o.Path == d.Path }) {
				continue
			}
			out = append(out, DriverDeviceRecord{DeviceRecord: DeviceRecord{Path: d.Path, Major: d.Major, Minor: d.Minor},
				NIC: n.NIC, Driver: n.Device.Driver, Claim: n.Device.Claim})
		}
	}
	return out
}

// draNames names the ports for logs.
func draNames(nics []podinfo.DRANIC) []string {
	out := make([]string, len(nics))
	for i, n := range nics {
		out[i] = n.NIC
	}
	return out
}
