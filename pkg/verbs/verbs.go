// Package verbs holds what the rail and rail-ipam plugins answer alike:
// STATUS and GC through raild, and a plan's addresses, parsed once, for
// the pod interface and for the CNI result.
package verbs

import (
	"context"
	"io"

	"github.com/containernetworking/cni/pkg/types"

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

// Print writes result to w in the version the runtime asked for.
func Print(w io.Writer, result types.Result, cniVersion string) error {
	converted, err := result.GetAsVersion(cniVersion)
	if err != nil {
		return types.NewError(types.ErrIncompatibleCNIVersion, "cannot give the result in version "+cniVersion, err.Error())
	}
	if err := converted.PrintTo(w); err != nil {
		return types.NewError(types.ErrInternal, "cannot write the result", err.Error())
	}
	return nil
}
