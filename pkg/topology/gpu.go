package topology

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
)

const nvidiaDriverDir = "/sys/bus/pci/drivers/nvidia"

// discoverGPUs lists the PCI functions bound to the nvidia driver that are
// display or 3D controllers (NVSwitch bridges bound to the same driver are
// left out) and numbers them in PCI bus order, as nvidia-smi does.
func (d *discovery) discoverGPUs() []GPU {
	names, err := d.fs.names(nvidiaDriverDir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			d.problem("nvidia driver", why(nvidiaDriverDir, err))
		}
		return nil
	}
	var gpus []GPU
	for _, name := range names {
		if _, ok := parseBDF(name); !ok {
			continue // bind, unbind, new_id, module, uevent ...
		}
		if g, ok := d.gpu(name); ok {
			gpus = append(gpus, g)
		}
	}
	slices.SortFunc(gpus, func(a, b GPU) int { return pciCompare(a.PCI, b.PCI) })
	for i := range gpus {
		gpus[i].Index = i
	}
	return gpus
}

// gpu reads one nvidia-bound PCI function. ok is false for functions that
// are not GPUs; a GPU with missing details is kept with what is known.
func (d *discovery) gpu(addr string) (GPU, bool) {
	g := GPU{PCI: addr, Minor: -1, NUMA: -1, CPUNode: -1}
	label := "gpu " + addr
	link := nvidiaDriverDir + "/" + addr
	dev, err := d.fs.real(link)
	if err != nil {
		d.problem(label, d.linkProblem(link, err))
	} else {
		if class, err := d.fs.read(dev + "/class"); err == nil && !isDisplayClass(class) {
			return GPU{}, false
		}
		if root, path, _, ok := pciLocation(dev); ok {
			g.Root, g.Path = root, path
		} else {
			d.problem(label, dev+" is not below a PCI host bridge")
		}
		g.NUMA = d.numa(label, dev)
		g.CPUNode = d.cpuNode(d.cpus, dev, g.NUMA)
		g.C2C = isC2C(d.cpus, g.NUMA, g.CPUNode)
	}
	d.gpuInfo(&g, label)
	return g, true
}

// isDisplayClass reports whether a PCI class code (0x030200) is a VGA or
// 3D controller.
func isDisplayClass(class string) bool {
	v, err := strconv.ParseUint(strings.TrimPrefix(class, "0x"), 16, 32)
	return err != nil || v>>16 == 0x03
}

// gpuInfo fills UUID and device minor from
// /proc/driver/nvidia/gpus/<BDF>/information, whose lines read
// "GPU UUID: \t GPU-…" and "Device Minor: \t 0".
func (d *discovery) gpuInfo(g *GPU, label string) {
	p := "/proc/driver/nvidia/gpus/" + g.PCI + "/information"
	text, err := d.fs.read(p)
	if err != nil {
		d.problem(label, why(p, err))
		return
	}
	hidden := false
	for line := range strings.SplitSeq(text, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "GPU UUID":
			if strings.Contains(val, "?") {
				hidden = true
				continue
			}
			g.UUID = val
		case "Device Minor":
			if n, err := strconv.Atoi(val); err == nil && n >= 0 {
				g.Minor = n
			}
		}
	}
	switch {
	case hidden:
		d.problem(label, p+": UUID hidden (read it as root)")
	case g.UUID == "":
		d.problem(label, p+": no GPU UUID line")
	}
}

// numa reads a PCI device's numa_node. -1 (no node from the firmware) on
// a machine of one NUMA node is that node (every cloud GPU VM seen so
// far); on a machine of several, or one whose nodes sysfs does not show,
// it stays -1 and is reported.
func (d *discovery) numa(label, dev string) int {
	n, err := d.fs.readInt(dev + "/numa_node")
	switch {
	case err != nil:
		d.problem(label, why(dev+"/numa_node", err))
		return -1
	case n < 0:
		if only, ok := d.cpus.onlyNode(); ok {
			return only
		}
		d.problem(label, "numa_node is -1 (unknown NUMA node)")
		return -1
	}
	return n
}
