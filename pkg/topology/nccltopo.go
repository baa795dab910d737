package topology

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// maxTopoFile bounds an NCCL topology file: real ones are a few KiB.
const maxTopoFile = 1 << 20

// TopoFile is an NCCL topology file (NCCL_TOPO_FILE): the PCIe tree of
// the node as the cloud or the vendor describes it, for nodes whose sysfs
// hides it. Its <cpu numaid> elements hold <pci busid class> trees; a
// <pci> with <pci> children is a bridge or switch (it may be virtual, such
// as Azure's ffff:ff:01.0, and need not exist in sysfs); a leaf of class
// 0x03…… is a GPU, of class 0x02…… a NIC (so is a leaf holding <gpu> or
// <nic>). The distances follow NCCL: PIX when one switch joins the pair,
// PXB when several do, PHB when only the CPU joins them, SYS across CPUs.
type TopoFile struct {
	Path string
	gpus map[string]topoPlace // PCI address → where it sits
	nics map[string]topoPlace
}

// topoPlace is where one endpoint sits: its <cpu> and the bridges from the
// top of its tree down to its parent.
type topoPlace struct {
	cpu     string
	bridges []string
}

// xmlNode is any element of the file, read generically.
type xmlNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []xmlNode  `xml:",any"`
}

func (n xmlNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return strings.TrimSpace(a.Value)
		}
	}
	return ""
}

// ReadTopoFile reads and checks an NCCL topology file. Errors name the
// file and the element at fault.
func ReadTopoFile(path string) (*TopoFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("topology file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTopoFile+1))
	if err != nil {
		return nil, fmt.Errorf("topology file %s: %w", path, err)
	}
	if len(data) > maxTopoFile {
		return nil, fmt.Errorf("topology file %s: larger than %d bytes: not an NCCL topology file", path, maxTopoFile)
	}
	t, err := ParseTopoFile(data)
	if err != nil {
		return nil, fmt.Errorf("topology file %s: %w", path, err)
	}
	t.Path = path
	return t, nil
}

// ParseTopoFile reads an NCCL topology file's XML.
func ParseTopoFile(data []byte) (*TopoFile, error) {
	var root xmlNode
	if err := xml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("not NCCL topology XML: %w", err)
	}
	if root.XMLName.Local != "system" {
		return nil, fmt.Errorf("top element <%s>: want <system>", root.XMLName.Local)
	}
	t := &TopoFile{gpus: map[string]topoPlace{}, nics: map[string]topoPlace{}}
	seen := map[string]bool{}
	for i, cpu := range root.Nodes {
		if cpu.XMLName.Local != "cpu" {
			continue
		}
		id := cpu.attr("numaid")
		if id == "" {
			id = fmt.Sprintf("#%d", i)
		}
		for _, child := range cpu.Nodes {
			if err := t.walk(child, topoPlace{cpu: id}, seen); err != nil {
				return nil, fmt.Errorf("<cpu numaid=%q>: %w", id, err)
			}
		}
	}
	if len(t.gpus) == 0 || len(t.nics) == 0 {
		return nil, fmt.Errorf("names %d GPU(s) (PCI class 0x03…) and %d NIC(s) (class 0x02…): it needs both to place NICs", len(t.gpus), len(t.nics))
	}
	return t, nil
}

// walk records the endpoints below one element.
func (t *TopoFile) walk(n xmlNode, at topoPlace, seen map[string]bool) error {
	if n.XMLName.Local != "pci" {
		return nil // <nic>/<net> outside a <pci>, <nvlink>, …: not placed by PCI
	}
	raw := n.attr("busid")
	busid := normalizePCI(raw)
	if busid == "" {
		return fmt.Errorf("<pci busid=%q>: not a PCI address (want dddd:bb:dd.f)", raw)
	}
	if seen[busid] {
		return fmt.Errorf("<pci busid=%q> appears twice", raw)
	}
	seen[busid] = true
	var children []xmlNode
	for _, c := range n.Nodes {
		if c.XMLName.Local == "pci" {
			children = append(children, c)
		}
	}
	if len(children) > 0 {
		below := topoPlace{cpu: at.cpu, bridges: append(slices.Clip(at.bridges), busid)}
		for _, c := range children {
			if err := t.walk(c, below, seen); err != nil {
				return err
			}
		}
		return nil
	}
	switch endpointKind(n) {
	case "gpu":
		t.gpus[busid] = at
	case "nic":
		t.nics[busid] = at
	}
	return nil
}

// endpointKind tells a leaf <pci>: "gpu", "nic" or "" (anything else).
func endpointKind(n xmlNode) string {
	for _, c := range n.Nodes {
		switch c.XMLName.Local {
		case "gpu":
			return "gpu"
		case "nic":
			return "nic"
		}
	}
	class := strings.TrimPrefix(strings.ToLower(n.attr("class")), "0x")
	switch {
	case strings.HasPrefix(class, "03"):
		return "gpu"
	case strings.HasPrefix(class, "02"):
		return "nic"
	}
	return ""
}

// distance is the file's class for a GPU and a NIC (by PCI address), with
// the reason; ok is false when the file does not name both.
func (t *TopoFile) distance(gpuPCI, nicPCI string) (c Class, via string, ok bool) {
	g, okG := t.gpus[gpuPCI]
	n, okN := t.nics[nicPCI]
	if !okG || !okN {
		return SYS, "", false
	}
	in := " in " + t.Path
	if g.cpu != n.cpu {
		return SYS, "across CPUs " + g.cpu + " and " + n.cpu + in, true
	}
	common := commonPrefix(g.bridges, n.bridges)
	switch {
	case common == 0:
		return PHB, "via CPU " + g.cpu + in, true
	case common == len(g.bridges) && common == len(n.bridges):
		return PIX, "via switch " + g.bridges[common-1] + in, true
	}
	return PXB, "via switch " + g.bridges[common-1] + in, true
}

// Devices lists the PCI addresses the file names, GPUs then NICs, each
// sorted.
func (t *TopoFile) Devices() (gpus, nics []string) {
	for pci := range t.gpus {
		gpus = append(gpus, pci)
	}
	for pci := range t.nics {
		nics = append(nics, pci)
	}
	slices.SortFunc(gpus, func(a, b string) int { return strings.Compare(a, b) })
	slices.SortFunc(nics, func(a, b string) int { return strings.Compare(a, b) })
	return gpus, nics
}

// errTopoFileDevices is wrapped by the error for a file naming devices
// the node does not have.
var errTopoFileDevices = errors.New("names PCI devices this node does not have")

// checkTopoFile fails when the file names a GPU or NIC with no PCI
// function below the root (a file for another machine size).
func (d *discovery) checkTopoFile(t *TopoFile) error {
	if t == nil {
		return nil
	}
	gpus, nics := t.Devices()
	var missing []string
	for _, kind := range []struct {
		what string
		list []string
	}{{"GPU", gpus}, {"NIC", nics}} {
		for _, pci := range kind.list {
			if !d.fs.exists("/sys/bus/pci/devices/" + pci) {
				missing = append(missing, pci+" ("+kind.what+")")
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("topology file %s %w: %s; give the file for this machine (its size or model)",
			t.Path, errTopoFileDevices, strings.Join(missing, ", "))
	}
	return nil
}
