package fakesys

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// netdev writes a network interface below its PCI function's net/ (or
// /sys/devices/virtual/net for devDir "") and its /sys/class/net link; it
// returns the interface's directory.
func (b *builder) netdev(devDir, name, linkLayer string, devPort int, state, seed string) string {
	base := devDir
	if base == "" {
		base = "/sys/devices/virtual"
	}
	dir := base + "/net/" + name
	operstate := "down"
	if state == "ACTIVE" {
		operstate = "up"
	}
	if linkLayer == "InfiniBand" {
		b.f.file(dir+"/type", "32")
		b.f.file(dir+"/mtu", "4092")
		b.f.file(dir+"/address", "00:00:10:49:fe:80:00:00:00:00:00:00:"+b.guidBytes(seed))
	} else {
		b.f.file(dir+"/type", "1")
		b.f.file(dir+"/mtu", "9000")
		b.f.file(dir+"/address", b.mac(seed+"/"+name))
	}
	b.f.file(dir+"/dev_port", strconv.Itoa(devPort))
	b.f.file(dir+"/operstate", operstate)
	carrier := "0"
	if operstate == "up" {
		carrier = "1"
	}
	b.f.file(dir+"/carrier", carrier)
	if devDir != "" {
		b.f.link(dir+"/device", devDir)
	}
	b.f.link("/sys/class/net/"+name, dir)
	return dir
}

// bondMaster writes a bonding master with its slaves' master, upper_ and
// lower_ links.
func (b *builder) bondMaster(master string, slaves, slaveDirs []string) {
	dir := "/sys/devices/virtual/net/" + master
	b.f.file(dir+"/type", "1")
	b.f.file(dir+"/mtu", "9000")
	b.f.file(dir+"/address", b.mac(master))
	b.f.file(dir+"/operstate", "up")
	b.f.file(dir+"/bonding/mode", "802.3ad 4")
	b.f.file(dir+"/bonding/slaves", strings.Join(slaves, " "))
	for i, slave := range slaves {
		b.f.link(slaveDirs[i]+"/master", dir)
		b.f.link(slaveDirs[i]+"/upper_"+master, dir)
		b.f.link(dir+"/lower_"+slave, slaveDirs[i])
	}
	b.f.link("/sys/class/net/"+master, dir)
}

// mac derives a stable locally administered unicast MAC address.
func (b *builder) mac(seed string) string {
	h := fnv.New64a()
	h.Write([]byte(b.name + "/" + seed))
	x := h.Sum64()
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", byte(x>>32), byte(x>>24), byte(x>>16), byte(x>>8), byte(x))
}

// guidBytes is the node GUID of seed as colon-separated bytes, the tail of
// an IPoIB hardware address.
func (b *builder) guidBytes(seed string) string {
	g := strings.ReplaceAll(b.guid(seed), ":", "")
	parts := make([]string, 0, 8)
	for i := 0; i+2 <= len(g); i += 2 {
		parts = append(parts, g[i:i+2])
	}
	return strings.Join(parts, ":")
}
