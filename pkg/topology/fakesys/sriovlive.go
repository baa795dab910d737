package fakesys

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// real resolves a machine path's links and returns the machine path it
// names.
func (f *files) real(p string) (string, error) {
	root, err := filepath.EvalSymlinks(f.root)
	if err != nil {
		return "", err
	}
	resolved, err := filepath.EvalSymlinks(f.host(p))
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, resolved)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s leads outside the root", p)
	}
	return "/" + rel, nil
}

// readInt reads a decimal attribute.
func (f *files) readInt(p string) (int, error) {
	b, err := os.ReadFile(f.host(p))
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return n, nil
}

// firstName is the first entry of a directory ("" when empty or absent).
func (f *files) firstName(dir string) string {
	entries, err := os.ReadDir(f.host(dir))
	if err != nil || len(entries) == 0 {
		return ""
	}
	return entries[0].Name()
}

// nextIndex is one more than the highest N of the class entries prefixN
// (0 for none), the next number the kernel would hand out.
func (f *files) nextIndex(class, prefix string) int {
	entries, _ := os.ReadDir(f.host(class))
	next := 0
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), prefix)); err == nil && strings.HasPrefix(e.Name(), prefix) {
			next = max(next, n+1)
		}
	}
	return next
}

// classesBelowFunction are the classes whose entries a PCI function's
// devices register (netdevs, RDMA devices and their char devices).
var classesBelowFunction = []string{"/sys/class/net", "/sys/class/infiniband", "/sys/class/infiniband_verbs", "/sys/class/infiniband_mad"}

// removeFunction takes away the PCI function a link (virtfnN) names, as
// the kernel does when a VF goes: the class entries of what it registered,
// its bus and driver links, its directory and the link itself.
func (b *builder) removeFunction(link string) {
	dir, err := b.f.real(link)
	if err != nil {
		b.f.err = fmt.Errorf("remove %s: %w", link, err)
		return
	}
	for _, class := range classesBelowFunction {
		entries, _ := os.ReadDir(b.f.host(class))
		for _, e := range entries {
			if target, err := b.f.real(class + "/" + e.Name()); err == nil && strings.HasPrefix(target, dir+"/") {
				b.f.remove(class + "/" + e.Name())
			}
		}
	}
	addr := filepath.Base(dir)
	if drv, err := b.f.real(dir + "/driver"); err == nil {
		b.f.remove(drv + "/" + addr)
	}
	b.f.remove("/sys/bus/pci/devices/" + addr)
	b.f.remove(dir)
	b.f.remove(link)
}

// remove deletes a machine path (a link, a file or a whole directory).
func (f *files) remove(p string) {
	if f.err != nil {
		return
	}
	if err := os.RemoveAll(f.host(p)); err != nil {
		f.err = fmt.Errorf("remove %s: %w", p, err)
	}
}

// addr is a parsed PCI address: its domain and 16-bit routing ID.
type addr struct {
	domain int
	rid    int // bus<<8 | device<<3 | function
}

// parseAddr parses "0000:19:00.2".
func parseAddr(s string) (addr, bool) {
	var domain, bus, dev, fn int
	if n, err := fmt.Sscanf(s, "%04x:%02x:%02x.%d", &domain, &bus, &dev, &fn); err != nil || n != 4 || dev > 31 || fn > 7 {
		return addr{}, false
	}
	return addr{domain: domain, rid: bus<<8 | dev<<3 | fn}, true
}
