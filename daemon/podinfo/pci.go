package podinfo

import "strings"

// normalizePCI returns a lower-case PCI address in sysfs form
// (dddd:bb:dd.f). It accepts that form, nvidia-smi's 8-digit domain
// (00000000:17:00.0) and the short bus form (17:00.0).
func normalizePCI(lower string) (string, bool) {
	parts := strings.Split(lower, ":")
	var domain, bus, devFn string
	switch len(parts) {
	case 2:
		domain, bus, devFn = "0000", parts[0], parts[1]
	case 3:
		domain, bus, devFn = parts[0], parts[1], parts[2]
	default:
		return "", false
	}
	if len(domain) == 8 && isHex(domain) && strings.HasPrefix(domain, "0000") {
		domain = domain[4:]
	}
	dev, fn, ok := strings.Cut(devFn, ".")
	if !ok || len(domain) != 4 || len(bus) != 2 || len(dev) != 2 || len(fn) != 1 {
		return "", false
	}
	if !isHex(domain) || !isHex(bus) || !isHex(dev) || fn[0] < '0' || fn[0] > '7' {
		return "", false
	}
	return domain + ":" + bus + ":" + dev + "." + fn, true
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}
