package topology

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// maxTopoFile bounds an NCCL topology file: real ones are a few KiB.
const maxTopoFile = 1 << 20

// MaxTopoDepth bounds how deep a topology file's elements nest: a real
// file is <system>, <cpu>, a few levels of PCIe switches, the endpoint
// and its <gpu>/<nic>/<net>, about ten.
const MaxTopoDepth = 32

// maxTopoElements bounds how many elements a topology file holds (a
// 64-GPU node's file has a few hundred).
const maxTopoElements = 1 << 16

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

// ReadTopoFile reads and checks an NCCL topology file. Errors name the
// file and the element at fault. Anything but a regular file (a FIFO, a
// socket, a device node) is refused before the first read, and opening
// never waits.
func ReadTopoFile(path string) (*TopoFile, error) {
	data, err := readFileMax(path, maxTopoFile)
	if err != nil {
		return nil, fmt.Errorf("topology file: %w", err)
	}
	t, err := ParseTopoFile(data)
	if err != nil {
		return nil, fmt.Errorf("topology file %s: %w", path, err)
	}
	t.Path = path
	return t, nil
}

// ParseTopoFile reads an NCCL topology file's XML: one <system> document,
// nothing after it but comments and blanks, at most MaxTopoDepth
// elements deep and maxTopoElements in all. It reads the file once, token
// by token, keeping only the open elements: the work and the memory are
// linear in the file's size.
func ParseTopoFile(data []byte) (*TopoFile, error) {
	p := topoParser{t: &TopoFile{gpus: map[string]topoPlace{}, nics: map[string]topoPlace{}}, seen: map[string]bool{}}
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not NCCL topology XML: %w", err)
		}
		if err := p.token(tok); err != nil {
			return nil, err
		}
	}
	if !p.done {
		return nil, errors.New("not NCCL topology XML: no <system> element")
	}
	t := p.t
	if len(t.gpus) == 0 || len(t.nics) == 0 {
		return nil, fmt.Errorf("names %d GPU(s) (PCI class 0x03…) and %d NIC(s) (class 0x02…): it needs both to place NICs", len(t.gpus), len(t.nics))
	}
	return t, nil
}

// topoParser is ParseTopoFile's state between tokens.
type topoParser struct {
	t        *TopoFile
	seen     map[string]bool // busids met
	open     []topoElem      // the open elements, <system> first
	elements int
	cpus     int  // <system>'s children so far (a <cpu> without numaid is named by its place)
	done     bool // </system> read
}

// topoElem is one open element.
type topoElem struct {
	name string
	// placed: a <cpu> of <system>, or a <pci> below one through <pci>s
	// only: the elements the distances read.
	placed bool
	cpu    string // the <cpu>'s id (placed elements)
	busid  string // a placed <pci>'s normalized address
	class  string
	// bridge: a placed <pci> holding a <pci>; kind: the first <gpu> or
	// <nic> it holds.
	bridge bool
	kind   string
}

func (p *topoParser) token(tok xml.Token) error {
	switch tok := tok.(type) {
	case xml.StartElement:
		return p.start(tok)
	case xml.EndElement:
		p.end()
	case xml.CharData:
		if text := strings.TrimSpace(string(tok)); text != "" && (p.done || len(p.open) == 0) {
			return fmt.Errorf("text %q %s", firstRunes(text, 32), p.outside())
		}
	}
	return nil
}

// outside says where text or an element outside <system> is.
func (p *topoParser) outside() string {
	if p.done {
		return "after </system>: one <system> document per file"
	}
	return "before <system>: not NCCL topology XML"
}

func (p *topoParser) start(el xml.StartElement) error {
	name := el.Name.Local
	switch {
	case p.done && name == "system":
		return errors.New("a second <system> document after </system>: one per file")
	case p.done:
		return fmt.Errorf("<%s> %s", name, p.outside())
	case len(p.open) == 0 && name != "system":
		return fmt.Errorf("top element <%s>: want <system>", name)
	case len(p.open) >= MaxTopoDepth:
		return fmt.Errorf("%s: nested deeper than %d elements: not an NCCL topology file", describe(el), MaxTopoDepth)
	}
	if p.elements++; p.elements > maxTopoElements {
		return fmt.Errorf("more than %d elements (at %s): not an NCCL topology file", maxTopoElements, describe(el))
	}
	e := topoElem{name: name}
	if len(p.open) == 0 {
		p.open = append(p.open, e)
		return nil
	}
	parent := &p.open[len(p.open)-1]
	switch {
	case len(p.open) == 1 && name == "cpu":
		e.placed, e.cpu = true, attr(el, "numaid")
		if e.cpu == "" {
			e.cpu = fmt.Sprintf("#%d", p.cpus)
		}
	case parent.placed && name == "pci":
		e.placed, e.cpu = true, parent.cpu
		raw := attr(el, "busid")
		if e.busid = normalizePCI(raw); e.busid == "" {
			return p.inCPU(e.cpu, fmt.Errorf("<pci busid=%q>: not a PCI address (want dddd:bb:dd.f)", raw))
		}
		if p.seen[e.busid] {
			return p.inCPU(e.cpu, fmt.Errorf("<pci busid=%q> appears twice", raw))
		}
		p.seen[e.busid] = true
		e.class = attr(el, "class")
		if parent.name == "pci" {
			parent.bridge = true
		}
	case parent.placed && parent.name == "pci" && parent.kind == "" && (name == "gpu" || name == "nic"):
		parent.kind = name
	}
	if len(p.open) == 1 {
		p.cpus++
	}
	p.open = append(p.open, e)
	return nil
}

// end closes the innermost element: a placed <pci> holding no <pci> is
// an endpoint, recorded where it sits.
func (p *topoParser) end() {
	e := p.open[len(p.open)-1]
	p.open = p.open[:len(p.open)-1]
	if len(p.open) == 0 {
		p.done = true
		return
	}
	if !e.placed || e.name != "pci" || e.bridge {
		return
	}
	at := topoPlace{cpu: e.cpu}
	for _, up := range p.open {
		if up.placed && up.name == "pci" {
			at.bridges = append(at.bridges, up.busid)
		}
	}
	switch endpointKind(e.kind, e.class) {
	case "gpu":
		p.t.gpus[e.busid] = at
	case "nic":
		p.t.nics[e.busid] = at
	}
}

func (p *topoParser) inCPU(id string, err error) error {
	return fmt.Errorf("<cpu numaid=%q>: %w", id, err)
}

// attr is an element's attribute, trimmed ("" when absent).
func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return strings.TrimSpace(a.Value)
		}
	}
	return ""
}

// describe names an element in errors: <pci busid="…"> or <name>.
func describe(el xml.StartElement) string {
	if b := attr(el, "busid"); b != "" {
		return fmt.Sprintf("<%s busid=%q>", el.Name.Local, firstRunes(b, 32))
	}
	return "<" + el.Name.Local + ">"
}

func firstRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// endpointKind tells a leaf <pci>: "gpu", "nic" or "" (anything else),
// from the first <gpu> or <nic> it holds, else its class.
func endpointKind(held, class string) string {
	if held != "" {
		return held
	}
	class = strings.TrimPrefix(strings.ToLower(class), "0x")
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
// function below the root (a file for another machine size), or declares
// as a NIC a function the node knows as a GPU (or the reverse).
func (d *discovery) checkTopoFile(t *TopoFile, m *Machine) error {
	if t == nil {
		return nil
	}
	gpus, nics := t.Devices()
	var missing, swapped []string
	for _, kind := range []struct {
		what, other string
		list        []string
		isOther     func(pci string) bool
	}{
		{"GPU", "NIC", gpus, func(pci string) bool { return slices.ContainsFunc(m.NICs, func(n NIC) bool { return n.PCI == pci }) }},
		{"NIC", "GPU", nics, func(pci string) bool { return slices.ContainsFunc(m.GPUs, func(g GPU) bool { return g.PCI == pci }) }},
	} {
		for _, pci := range kind.list {
			switch {
			case !d.fs.exists("/sys/bus/pci/devices/" + pci):
				missing = append(missing, pci+" ("+kind.what+")")
			case kind.isOther(pci):
				swapped = append(swapped, fmt.Sprintf("<pci busid=%q> is a %s there but a %s on this node", pci, kind.what, kind.other))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("topology file %s %w: %s; give the file for this machine (its size or model)",
			t.Path, errTopoFileDevices, strings.Join(missing, ", "))
	}
	if len(swapped) > 0 {
		return fmt.Errorf("topology file %s: %s; fix the element's class (0x03… a GPU, 0x02… a NIC) or give the file for this machine",
			t.Path, strings.Join(swapped, "; "))
	}
	return nil
}
