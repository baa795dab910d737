package topology

import (
	"fmt"
	"strconv"
	"strings"
)

var classNames = [...]string{PIX: "PIX", PXB: "PXB", PHB: "PHB", P2C: "P2C", NODE: "NODE", SYS: "SYS"}

// String returns the nvidia-smi name of the class ("PIX", "SYS", ...).
func (c Class) String() string {
	if c >= 0 && int(c) < len(classNames) {
		return classNames[c]
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// ParseClass reads a class name as nvidia-smi prints it, in any case.
func ParseClass(s string) (Class, error) {
	name := strings.TrimSpace(s)
	for c, n := range classNames {
		if strings.EqualFold(n, name) {
			return Class(c), nil
		}
	}
	return SYS, fmt.Errorf("distance class %q: want one of PIX, PXB, PHB, P2C, NODE, SYS", s)
}

// MarshalText makes a Class a JSON string ("PIX"), also as a map key.
func (c Class) MarshalText() ([]byte, error) {
	if c < 0 || int(c) >= len(classNames) {
		return nil, fmt.Errorf("distance class %d: out of range", int(c))
	}
	return []byte(classNames[c]), nil
}

// UnmarshalText reads a class written by MarshalText.
func (c *Class) UnmarshalText(b []byte) error {
	parsed, err := ParseClass(string(b))
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

// legend explains the classes for people, in the order nvidia-smi uses.
var legend = [...]struct {
	class Class
	text  string
}{
	{SYS, "crosses PCIe and the inter-socket link between NUMA nodes (QPI/UPI, xGMI)"},
	{NODE, "crosses PCIe and the link between host bridges of one NUMA node"},
	{P2C, "a Grace GPU's chip-to-chip link to its CPU, then PCIe on that socket (NCCL's P2C)"},
	{PHB, "crosses PCIe and one PCIe host bridge (the CPU's root complex)"},
	{PXB, "crosses several PCIe switches, never the host bridge"},
	{PIX, "crosses at most one PCIe switch"},
}
