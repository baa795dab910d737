package topology

import "strings"

// LinkLayer is a port's link layer as sysfs names it
// (/sys/class/infiniband/<dev>/ports/<n>/link_layer). The zero value means
// unknown, or "any" in a selector.
type LinkLayer string

// The link layers of RDMA ports.
const (
	InfiniBand LinkLayer = "InfiniBand"
	Ethernet   LinkLayer = "Ethernet"
)

// LinkLayers lists the known link layers.
func LinkLayers() []LinkLayer { return []LinkLayer{InfiniBand, Ethernet} }

// ParseLinkLayer accepts the sysfs spelling in any case; ok is false for
// anything else (the empty string included).
func ParseLinkLayer(s string) (LinkLayer, bool) {
	for _, ll := range LinkLayers() {
		if strings.EqualFold(s, string(ll)) {
			return ll, true
		}
	}
	return "", false
}

// Matches reports whether a port of link layer have satisfies want ("" wants any).
func (want LinkLayer) Matches(have LinkLayer) bool {
	return want == "" || strings.EqualFold(string(want), string(have))
}
