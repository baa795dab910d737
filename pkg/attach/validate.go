package attach

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"strings"
	"unicode"

	"github.com/railcni/rail/pkg/rdma"
)

// Reserved routing tables that Spec.Table must not name.
const (
	tableDefault = 253
	tableMain    = 254
	tableLocal   = 255
)

// validate checks s for Attach and Check and returns an error naming the
// offending field and how to fix it.
func validate(s Spec) error {
	return validateWith(s, validateNames)
}

// validateAll validates the specs of one AttachAll: each, and that no two
// give the pod the same name.
func validateAll(specs []Spec) error {
	if len(specs) == 0 {
		return errors.New("invalid attach spec: no interface to attach")
	}
	seen := map[string]bool{}
	for _, s := range specs {
		if err := validate(s); err != nil {
			return err
		}
		if seen[s.Name] {
			return fmt.Errorf("invalid attach spec: two interfaces are named %s: give each its own Name", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// validateDetach is validate for Detach, which also accepts a Spec without
// Parent (rebuilt from a cached CNI result): the pod interface's alias
// then says where it came from.
// validateDetach accepts an empty Mode: Detach then takes it from the
// alias rail left on the link.
func validateDetach(s Spec) error {
	if s.Mode == "" {
		s.Mode = ModeMove
	}
	return validateWith(s, validateNamesParentOptional)
}

func validateWith(s Spec, names func(Spec) error) error {
	checks := []func(Spec) error{
		validateModeFields,
		names,
		validateAddresses,
		validateRoutes,
		validateLinkSettings,
		validateRDMA,
		validateOwner,
	}
	for _, check := range checks {
		if err := check(s); err != nil {
			return fmt.Errorf("invalid attach spec: %w", err)
		}
	}
	return nil
}

func validateModeFields(s Spec) error {
	switch s.Mode {
	case ModeMove, ModeMacvlan, ModeIPVLAN, ModeIPoIB, ModeVF:
	default:
		return fmt.Errorf("Mode %q is unknown: use %q, %q, %q, %q or %q", s.Mode, ModeMove, ModeMacvlan, ModeIPVLAN, ModeIPoIB, ModeVF)
	}
	if err := validateVF(s); err != nil {
		return err
	}
	if s.MAC != "" && s.Mode != ModeMacvlan {
		return fmt.Errorf("MAC is only supported in mode %q, not %q: leave it empty", ModeMacvlan, s.Mode)
	}
	if s.Mode == ModeMacvlan {
		if _, err := macvlanModeOf(s.MacvlanMode); err != nil {
			return err
		}
		if s.MAC != "" {
			if _, err := net.ParseMAC(s.MAC); err != nil {
				return fmt.Errorf("MAC %q is not a MAC address (like 02:00:00:00:00:01): %w", s.MAC, err)
			}
		}
	}
	if s.Mode == ModeIPoIB {
		if _, err := ipoibModeOf(s.IPoIBMode); err != nil {
			return err
		}
		if s.PKey != 0 && s.PKey&0x7fff == 0 {
			return fmt.Errorf("PKey %#04x has no partition number: use 0x0001-0x7fff (the full-membership bit 0x8000 may be set), or 0 for the parent's", s.PKey)
		}
	}
	return nil
}

func validateNames(s Spec) error {
	if s.Mode == ModeVF && s.Parent == "" {
		// A VF without a netdev on the host: refused with why at attach,
		// unless the pod already has it (a repeated ADD).
		return validateNamesParentOptional(s)
	}
	if err := checkIfName(s.Parent); err != nil {
		return fmt.Errorf("field Parent: %w", err)
	}
	return validateNamesParentOptional(s)
}

func validateNamesParentOptional(s Spec) error {
	if s.Parent != "" {
		if err := checkIfName(s.Parent); err != nil {
			return fmt.Errorf("field Parent: %w", err)
		}
	}
	if err := checkIfName(s.Name); err != nil {
		return fmt.Errorf("field Name: %w", err)
	}
	return nil
}

// checkIfName applies the kernel's rules for interface names.
func checkIfName(name string) error {
	if name == "" {
		return fmt.Errorf("interface name is empty")
	}
	if len(name) > 15 || name == "." || name == ".." {
		return fmt.Errorf("interface name %q is invalid: use 1-15 characters, not \".\" or \"..\"", name)
	}
	for _, r := range name {
		if r == '/' || r == ':' || unicode.IsSpace(r) {
			return fmt.Errorf("interface name %q contains %q: '/', ':' and whitespace are not allowed", name, r)
		}
	}
	return nil
}

func validateAddresses(s Spec) error {
	for i, a := range s.Addresses {
		if !a.IsValid() {
			return fmt.Errorf("field Addresses[%d] is not a valid prefix: use an address with its prefix length, like 10.10.0.5/24", i)
		}
		if a.Addr().IsUnspecified() || a.Addr().Zone() != "" {
			return fmt.Errorf("field Addresses[%d] %s is not a host address: use a unicast address without zone", i, a)
		}
		if a.Addr().Is4In6() {
			return fmt.Errorf("field Addresses[%d] %s is an IPv4-mapped IPv6 address: use the plain IPv4 form", i, a)
		}
	}
	return nil
}

func validateRoutes(s Spec) error {
	for i, r := range s.Routes {
		if !r.Dst.IsValid() {
			return fmt.Errorf("Routes[%d].Dst is not a valid prefix: use a network like 10.20.0.0/16", i)
		}
		if r.Dst != r.Dst.Masked() {
			return fmt.Errorf("Routes[%d].Dst %s has host bits set: use %s", i, r.Dst, r.Dst.Masked())
		}
		if r.GW.IsValid() && (r.GW.Is4() != r.Dst.Addr().Is4() || r.GW.IsUnspecified()) {
			return fmt.Errorf("Routes[%d].GW %s does not fit Dst %s: use a gateway of the same address family, or none", i, r.GW, r.Dst)
		}
	}
	return nil
}

func validateLinkSettings(s Spec) error {
	if s.MTU != 0 && (s.MTU < 68 || s.MTU > 65535) {
		return fmt.Errorf("MTU %d is out of range: use 68-65535, or 0 to keep the device's", s.MTU)
	}
	if s.MTU != 0 && s.MTU < 1280 && hasIPv6(s.Addresses) {
		return fmt.Errorf("MTU %d is below 1280, the IPv6 minimum, but Addresses has IPv6: raise MTU", s.MTU)
	}
	if s.Table < 0 || s.Table > math.MaxUint32 {
		return fmt.Errorf("field Table %d is out of range: use 1-%d, or 0 for no policy routing", s.Table, uint32(math.MaxUint32))
	}
	if s.Table == tableDefault || s.Table == tableMain || s.Table == tableLocal {
		return fmt.Errorf("field Table %d is a reserved kernel table (253 default, 254 main, 255 local): pick another number", s.Table)
	}
	return nil
}

func validateRDMA(s Spec) error {
	if s.RDMADevice == "" || s.RDMANetns != rdma.NetnsExclusive {
		return nil
	}
	if err := rdma.ModeRequirement(s.Mode, rdma.NetnsExclusive); err != nil {
		return fmt.Errorf("RDMADevice %s: %w", s.RDMADevice, err)
	}
	return nil
}

func hasIPv6(addrs []netip.Prefix) bool {
	for _, a := range addrs {
		if a.Addr().Is6() {
			return true
		}
	}
	return false
}

// validateOwner keeps the owner's fields parseable and the whole alias
// within what the kernel stores.
func validateOwner(s Spec) error {
	o := s.Owner
	for _, f := range o.fields() {
		if strings.ContainsAny(*f.value, ":=") || strings.IndexFunc(*f.value, unicode.IsSpace) >= 0 {
			return fmt.Errorf("Owner %s %q contains ':', '=' or whitespace: use the CNI names as given (letters, digits, '-', '_', '.')", f.key, *f.value)
		}
	}
	worst := aliasRecord{Host: s.Parent, Name: s.Name, MTU: math.MaxUint16, Up: true, RDMA: s.RDMADevice, Table: s.Table, Owner: o,
		VF: worstVFRecord(s)}
	if s.Mode == ModeVF && s.Parent == "" {
		worst.Host = "xxxxxxxxxxxxxxx" // the longest name the VF's netdev may have
	}
	if n := len(worst.String()); n > maxAliasLen {
		return fmt.Errorf("Owner does not fit the interface alias (%d bytes with the other fields, the kernel keeps %d): shorten the network or pool name, or leave Owner empty", n, maxAliasLen)
	}
	return nil
}

// FitOwner returns o as s can record it: a field that could not be parsed
// back (':', '=' or whitespace) is left out, and while the alias would be
// longer than the kernel keeps, the least needed fields go first (pool,
// NIC, network, attachment). Recording an owner must never fail an attach.
func FitOwner(s Spec, o Owner) Owner {
	for _, f := range o.fields() {
		if strings.ContainsAny(*f.value, ":=") || strings.IndexFunc(*f.value, unicode.IsSpace) >= 0 {
			*f.value = ""
		}
	}
	for _, drop := range [][]*string{{&o.Pool}, {&o.NIC, &o.NICPort}, {&o.Network}, {&o.CNIIfName}, {&o.Sandbox}} {
		s.Owner = o
		if validateOwner(s) == nil {
			return o
		}
		for _, field := range drop {
			*field = ""
		}
	}
	return Owner{}
}
