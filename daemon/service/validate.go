package service

import (
	"fmt"
	"net"
	"regexp"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
)

var (
	ifNameRE  = regexp.MustCompile(`^[^\s/:]{1,15}$`)
	sandboxRE = regexp.MustCompile(`^[a-zA-Z0-9_.:-]{1,256}$`)
)

func invalid(field, format string, args ...any) *api.Error {
	return &api.Error{Code: api.CodeInvalidConfig, Msg: fmt.Sprintf("invalid field %q", field), Details: fmt.Sprintf(format, args...)}
}

// ValidateAllocate checks a request before anything is placed or leased.
func ValidateAllocate(req api.AllocateRequest) error {
	if err := ValidateAttachment(api.AttachmentRequest{Sandbox: req.Sandbox, CNIIfName: req.CNIIfName, Network: req.Network}); err != nil {
		return err
	}
	if !req.Mode.Valid() {
		return invalid("mode", "%q: use one of %s", req.Mode, api.ModeList(append(api.AttachModes(), api.ModeIPAM)))
	}
	if req.IfPrefix != "" && !api.ValidIfPrefix(req.IfPrefix) {
		return invalid("ifPrefix", "%q: a letter, then letters, digits, '_' or '-', at most 11 bytes so that names fit 15", api.Excerpt(req.IfPrefix, 64))
	}
	if req.Pool != "" && !api.ValidPoolName(req.Pool) {
		return invalid("pool", "%q: letters, digits, '.', '_' and '-', at most 63", api.Excerpt(req.Pool, 64))
	}
	if req.IfNames != "" && req.IfNames != api.IfNamesOrder && req.IfNames != api.IfNamesRail {
		return invalid("ifNames", "%q: use %q (pick order, the default) or %q (rail index)", api.Excerpt(req.IfNames, 64), api.IfNamesOrder, api.IfNamesRail)
	}
	if err := api.CheckUnresolvedGPUs(req.UnresolvedGPUs); err != nil {
		return invalid("unresolvedGPUs", "%s", err)
	}
	if req.VFPerGPU != nil && req.Mode != api.ModeVF {
		return invalid("vfPerGPU", "is a vf mode key (a VF for each GPU even where GPUs share a PF): set \"mode\":\"vf\", or remove it")
	}
	if err := validateMAC(req); err != nil {
		return err
	}
	if req.MaxNICs < 0 {
		return invalid("maxNICs", "%d must not be negative", req.MaxNICs)
	}
	if ll := req.Selector.LinkLayer; ll != "" {
		if _, ok := topology.ParseLinkLayer(string(ll)); !ok {
			return invalid("selector.linkLayer", "%q: use InfiniBand or Ethernet", ll)
		}
	}
	return nil
}

// ValidateAttachment checks the key of an attachment.
func ValidateAttachment(req api.AttachmentRequest) error {
	if req.Sandbox == "" {
		return invalid("sandbox", "empty: the CNI_CONTAINERID of the pod sandbox is required")
	}
	if !sandboxRE.MatchString(req.Sandbox) {
		return invalid("sandbox", "%q: letters, digits, '_', '.', ':' and '-' only, at most 256", req.Sandbox)
	}
	if !ifNameRE.MatchString(req.CNIIfName) {
		return invalid("ifName", "%q must be 1 to 15 bytes without spaces, '/' or ':'", req.CNIIfName)
	}
	if req.Network == "" {
		return invalid("network", "empty: the network name (netconf \"name\") is required")
	}
	return nil
}

// validateMAC checks the admin MAC a vf-mode request asks, in the form
// raild compares MACs in (lower case, colons).
func validateMAC(req api.AllocateRequest) error {
	if req.MAC == "" {
		return nil
	}
	if req.Mode != api.ModeVF {
		return invalid("mac", "is a vf mode key (the VF's admin MAC): set \"mode\":\"vf\", or remove it")
	}
	mac, err := net.ParseMAC(req.MAC)
	if err != nil || len(mac) != 6 || mac.String() != req.MAC {
		return invalid("mac", "%q: want six bytes written like 02:00:00:00:00:01 (lower case)", api.Excerpt(req.MAC, 64))
	}
	return nil
}
