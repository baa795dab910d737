package draplugin

import (
	"context"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
)

// PrepareResourceClaims records the devices each claim got, after
// checking them against this node's devices and the claim's parameters;
// it writes the record before it answers. Preparing a claim again gives
// the same answer. Nothing is attached here: the pod's CNI ADD does that.
func (p *Plugin) PrepareResourceClaims(_ context.Context, claims []*resourcev1.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cat := p.catalog.Load()
	if cat == nil {
		cat = p.rebuild()
	}
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	var put []Prepared
	var results []kubeletplugin.PrepareResult
	for _, claim := range claims {
		prep, devs, err := p.prepare(claim, cat, put)
		if err != nil {
			out[claim.UID] = kubeletplugin.PrepareResult{Err: err}
			p.log.Warn("claim not prepared", "claim", claim.Namespace+"/"+claim.Name, "error", err)
			continue
		}
		put = append(put, prep)
		results = append(results, kubeletplugin.PrepareResult{Devices: devs})
	}
	if err := p.claims.Put(put...); err != nil {
		for _, prep := range put {
			out[prep.UID] = kubeletplugin.PrepareResult{Err: err}
		}
		return out, nil
	}
	for i, prep := range put {
		out[prep.UID] = results[i]
		p.log.Info("claim prepared", "claim", prep.Namespace+"/"+prep.Name, "devices", len(prep.Devices))
	}
	if len(put) > 0 {
		p.MachineChanged()
	}
	return out, nil
}

// prepare checks one claim; batch are the claims prepared before it in
// the same call.
func (p *Plugin) prepare(claim *resourcev1.ResourceClaim, cat *Catalog, batch []Prepared) (Prepared, []kubeletplugin.Device, error) {
	name := claim.Namespace + "/" + claim.Name
	alloc := claim.Status.Allocation
	if alloc == nil {
		return Prepared{}, nil, fmt.Errorf("claim %s is not allocated", name)
	}
	prep := Prepared{UID: claim.UID, Namespace: claim.Namespace, Name: claim.Name}
	for _, r := range claim.Status.ReservedFor {
		if r.Resource == "pods" && r.APIGroup == "" {
			prep.Pods = append(prep.Pods, PodRef{Name: r.Name, UID: r.UID})
		}
	}
	var devs []kubeletplugin.Device
	for i, r := range alloc.Devices.Results {
		if r.Driver != p.cfg.DriverName {
			continue
		}
		where := fmt.Sprintf("claim %s status.allocation.devices.results[%d] (request %q, device %s)", name, i, r.Request, r.Device)
		if r.Pool != p.opt.Node {
			return Prepared{}, nil, fmt.Errorf("%s: pool %q, but this node publishes pool %q", where, r.Pool, p.opt.Node)
		}
		e, ok := cat.Entries[r.Device]
		if !ok {
			return Prepared{}, nil, fmt.Errorf("%s: this node publishes no such device now", where)
		}
		if other, held := p.heldElsewhere(claim.UID, e, batch); held {
			return Prepared{}, nil, fmt.Errorf("%s: the %s device is prepared for claim %s already", where, e.Kind, other)
		}
		params, err := requestParams(p.cfg.DriverName, alloc.Devices.Config, r.Request)
		if err == nil {
			params, err = params.check(e, p.opt.Pools())
		}
		if err != nil {
			return Prepared{}, nil, fmt.Errorf("claim %s request %q: %w", name, r.Request, err)
		}
		a := Assigned{Request: r.Request, Pool: r.Pool, Device: r.Device, Kind: e.Kind, NIC: e.NIC, VF: e.VF, Params: params}
		d := kubeletplugin.Device{Requests: []string{r.Request}, PoolName: r.Pool, DeviceName: r.Device}
		if r.ShareID != nil {
			a.ShareID = string(*r.ShareID)
			d.ShareID = r.ShareID
		}
		prep.Devices = append(prep.Devices, a)
		devs = append(devs, d)
	}
	return prep, devs, nil
}

// heldElsewhere names another prepared claim holding an exclusive device.
func (p *Plugin) heldElsewhere(uid types.UID, e Entry, batch []Prepared) (string, bool) {
	if e.Kind == KindShared {
		return "", false
	}
	for _, other := range append(p.claims.All(), batch...) {
		if other.UID == uid {
			continue
		}
		for _, a := range other.Devices {
			if a.Device == e.Device {
				return other.Namespace + "/" + other.Name, true
			}
		}
	}
	return "", false
}

// UnprepareResourceClaims forgets the claims (unknown ones too: the call
// is idempotent). The pod's CNI DEL releases what its ADD attached.
func (p *Plugin) UnprepareResourceClaims(_ context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.claims.Remove(uids(claims)...)
	out := make(map[types.UID]error, len(claims))
	for _, c := range claims {
		out[c.UID] = err
	}
	if err == nil {
		p.log.Info("claims unprepared", "claims", len(claims))
		p.MachineChanged()
	}
	return out, nil
}
