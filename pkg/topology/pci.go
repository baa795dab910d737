package topology

import (
	"strconv"
	"strings"
)

// bdf is a parsed PCI address DDDD:BB:DD.F (the domain may be wider than
// four digits, as with VMD domains such as 10000:e0:06.0).
type bdf struct {
	domain uint32
	bus    uint8
	dev    uint8
	fn     uint8
}

// parseBDF parses a full PCI address; ok is false for anything else.
func parseBDF(s string) (bdf, bool) {
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || len(dom) < 4 {
		return bdf{}, false
	}
	busStr, rest, ok := strings.Cut(rest, ":")
	if !ok || len(busStr) != 2 {
		return bdf{}, false
	}
	devStr, fnStr, ok := strings.Cut(rest, ".")
	if !ok || len(devStr) != 2 || len(fnStr) != 1 {
		return bdf{}, false
	}
	d, err1 := strconv.ParseUint(dom, 16, 32)
	b, err2 := strconv.ParseUint(busStr, 16, 8)
	v, err3 := strconv.ParseUint(devStr, 16, 8)
	f, err4 := strconv.ParseUint(fnStr, 8, 8)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || v > 0x1f {
		return bdf{}, false
	}
	return bdf{domain: uint32(d), bus: uint8(b), dev: uint8(v), fn: uint8(f)}, true
}

// less orders addresses the way nvidia-smi numbers GPUs: domain, bus,
// device, function.
func (a bdf) less(b bdf) bool {
	if a.domain != b.domain {
		return a.domain < b.domain
	}
	if a.bus != b.bus {
		return a.bus < b.bus
	}
	if a.dev != b.dev {
		return a.dev < b.dev
	}
	return a.fn < b.fn
}

// pciLess compares two PCI address strings in bus order; strings that do
// not parse sort after those that do, by text.
func pciLess(a, b string) bool {
	pa, okA := parseBDF(a)
	pb, okB := parseBDF(b)
	switch {
	case okA && okB:
		return pa.less(pb)
	case okA != okB:
		return okA
	default:
		return a < b
	}
}

// pciCompare is pciLess as a three-way comparison, for slices.SortFunc.
func pciCompare(a, b string) int {
	switch {
	case pciLess(a, b):
		return -1
	case pciLess(b, a):
		return 1
	}
	return 0
}

// NormalizePCI accepts "19:00.0" or "0000:19:00.0" in any case and returns
// the full lower-case form, or "" when s is not a PCI address.
func NormalizePCI(s string) string { return normalizePCI(s) }

func normalizePCI(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.Count(s, ":") == 1 {
		s = "0000:" + s
	}
	if _, ok := parseBDF(s); !ok {
		return ""
	}
	return s
}

// isRootBus reports whether a path element names a PCI host bridge:
// "pci" followed by domain:bus, e.g. pci0000:15.
func isRootBus(elem string) bool {
	rest, ok := strings.CutPrefix(elem, "pci")
	if !ok {
		return false
	}
	dom, bus, ok := strings.Cut(rest, ":")
	if !ok || len(dom) < 4 || len(bus) != 2 {
		return false
	}
	_, err1 := strconv.ParseUint(dom, 16, 32)
	_, err2 := strconv.ParseUint(bus, 16, 8)
	return err1 == nil && err2 == nil
}

// pciLocation reads a resolved sysfs device path such as
// /sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0
// and returns the host bridge ("pci0000:15"), the bridges from the root
// port down to the device's parent, and the device's own address. Elements
// that are neither (a nested VMD host bridge, a hypervisor bus) are
// skipped. ok is false when the path holds no PCI device below a host
// bridge.
func pciLocation(sysPath string) (root string, path []string, dev string, ok bool) {
	var chain []string
	for elem := range strings.SplitSeq(strings.TrimPrefix(sysPath, "/"), "/") {
		switch {
		case root == "" && isRootBus(elem):
			root = elem
		case root != "":
			if _, isBDF := parseBDF(elem); isBDF {
				chain = append(chain, elem)
			}
		}
	}
	if root == "" || len(chain) == 0 {
		return "", nil, "", false
	}
	return root, chain[:len(chain)-1], chain[len(chain)-1], true
}
