// Package verbs holds what the rail and rail-ipam plugins answer alike:
// STATUS and GC through raild, and the CNI result of a plan's addresses.
package verbs

import (
	"context"
	"fmt"
	"net"

	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/netconf"
)

// Raild is what the plugins ask of raild.
type Raild interface {
	Allocate(ctx context.Context, req api.AllocateRequest) (*api.Plan, error)
	Check(ctx context.Context, req api.AttachmentRequest) (*api.Plan, error)
	Release(ctx context.Context, req api.AttachmentRequest) error
	Status(ctx context.Context, pool string) (*api.Status, error)
	GC(ctx context.Context, req api.GCRequest) (*api.GCResult, error)
}

// Status answers CNI STATUS: code 50 when raild cannot serve an ADD (down,
// or the pool full). tolerateDown makes an unreachable raild healthy, for a
// network whose pods may start without it.
func Status(ctx context.Context, raild Raild, pool string, tolerateDown bool) error {
	st, err := raild.Status(ctx, pool)
	switch {
	case err != nil && tolerateDown && api.IsUnreachable(err):
		return nil
	case err != nil:
		return types.NewError(api.CodeNotAvailable, "raild is not available", err.Error())
	case !st.Healthy:
		return types.NewError(api.CodeNotAvailable, "raild cannot serve new pods", api.Excerpt(st.Reason, api.MaxDetails))
	}
	return nil
}

// GC hands the runtime's valid attachments of a network to raild, which
// releases every other lease of that network.
func GC(ctx context.Context, raild Raild, network string, valid []types.GCAttachment) error {
	req := api.GCRequest{Network: network, Valid: make([]api.Attachment, 0, len(valid))}
	for _, a := range valid {
		req.Valid = append(req.Valid, api.Attachment{Sandbox: a.ContainerID, CNIIfName: a.IfName})
	}
	if _, err := raild.GC(ctx, req); err != nil {
		return netconf.CNIError("raild gc", err)
	}
	return nil
}

// AddAddresses appends a planned interface's addresses and routes to
// result; index is the interface's place in result.Interfaces (nil for an
// IPAM result). An address or route raild should never have planned fails
// the whole result: a pod must not start with part of its network.
func AddAddresses(result *current.Result, iface api.PlanInterface, index *int) error {
	for _, a := range iface.Addresses {
		ipnet, err := types.ParseCIDR(a.CIDR)
		if err != nil {
			return types.NewError(types.ErrInternal, "raild planned a bad address", fmt.Sprintf("%s: %v", iface.Name, err))
		}
		gw, err := optionalIP(a.Gateway)
		if err != nil {
			return types.NewError(types.ErrInternal, "raild planned a bad gateway", fmt.Sprintf("%s: %v", iface.Name, err))
		}
		result.IPs = append(result.IPs, &current.IPConfig{Interface: index, Address: *ipnet, Gateway: gw})
	}
	for _, r := range iface.Routes {
		dst, err := types.ParseCIDR(r.Dst)
		if err != nil {
			return types.NewError(types.ErrInternal, "raild planned a bad route", fmt.Sprintf("%s: %v", iface.Name, err))
		}
		gw, err := optionalIP(r.GW)
		if err != nil {
			return types.NewError(types.ErrInternal, "raild planned a bad route", fmt.Sprintf("%s: %v", iface.Name, err))
		}
		result.Routes = append(result.Routes, &types.Route{Dst: *dst, GW: gw})
	}
	return nil
}

func optionalIP(s string) (net.IP, error) {
	if s == "" {
		return nil, nil
	}
	ip := net.ParseIP(s)
	if ip == nil {
		return nil, fmt.Errorf("%q is not an IP address", api.Excerpt(s, 64))
	}
	return ip, nil
}
