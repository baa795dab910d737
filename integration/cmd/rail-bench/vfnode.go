package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// vfPF is a PF of this machine with its VFs, as sysfs lays them out:
// /sys/class/net/<pf>/device is the PF's PCI function, its virtfn<N>
// links the VFs, each VF's netdev under virtfn<N>/net.
type vfPF struct {
	name, pci string
	vfs       []vfFunc // by index
}

// vfFunc is one VF: its index on the PF, PCI address and host netdev.
type vfFunc struct {
	index       int
	pci, netdev string
}

// readPF reads the PF whose netdev is name, and its VFs, from sysfs.
func readPF(sysfs, name string) (vfPF, error) {
	dev, err := filepath.EvalSymlinks(filepath.Join(sysfs, "class", "net", name, "device"))
	if err != nil {
		return vfPF{}, fmt.Errorf("--vf %s: no such PCI netdev in %s/class/net (name the PF's netdev, e.g. --vf pf0): %w", name, sysfs, err)
	}
	pf := vfPF{name: name, pci: filepath.Base(dev)}
	links, err := filepath.Glob(filepath.Join(dev, "virtfn*"))
	if err != nil {
		return vfPF{}, err
	}
	for _, link := range links {
		index, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(link), "virtfn"))
		if err != nil {
			continue
		}
		target, err := filepath.EvalSymlinks(link)
		if err != nil {
			return vfPF{}, fmt.Errorf("VF %d of %s: %w", index, name, err)
		}
		netdev := firstDirEntry(filepath.Join(link, "net"))
		if netdev == "" {
			return vfPF{}, fmt.Errorf("VF %d of %s (%s) has no netdev in the host netns (bound to vfio-pci, no driver, "+
				"or inside a pod): every VF of --vf must be a free netdev", index, name, filepath.Base(target))
		}
		pf.vfs = append(pf.vfs, vfFunc{index: index, pci: filepath.Base(target), netdev: netdev})
	}
	if len(pf.vfs) == 0 {
		return vfPF{}, fmt.Errorf("--vf %s: the PF has no VFs (sriov_numvfs 0): create them first, "+
			"e.g. echo 7 > %s/sriov_numvfs", name, dev)
	}
	slices.SortFunc(pf.vfs, func(a, b vfFunc) int { return a.index - b.index })
	return pf, nil
}

func firstDirEntry(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return ""
	}
	return entries[0].Name()
}
