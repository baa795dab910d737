package ipam

import "net/netip"

// specialBlock is a block of addresses a pool must never cover: a pod
// interface needs a unicast address that is valid beyond its own host and
// link, and a pool's subnet becomes an on-link route in the pod.
type specialBlock struct {
	prefix netip.Prefix
	what   string
}

// specialBlocks lists the blocks a pool's subnet may not overlap (RFC 6890
// and the kernel's own treatment of these addresses).
func specialBlocks() []specialBlock {
	return []specialBlock{
		{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0.0.0.0/8, never a source address)"},
		{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
		{netip.MustParsePrefix("169.254.0.0/16"), "link-local (the kernel never routes it off the link)"},
		{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
		{netip.MustParsePrefix("240.0.0.0/4"), "reserved (class E, with the broadcast address 255.255.255.255)"},
		{netip.MustParsePrefix("::/128"), "the unspecified address"},
		{netip.MustParsePrefix("::1/128"), "loopback"},
		{netip.MustParsePrefix("::ffff:0:0/96"), "IPv4-mapped"},
		{netip.MustParsePrefix("fe80::/10"), "link-local (every interface makes its own)"},
		{netip.MustParsePrefix("ff00::/8"), "multicast"},
	}
}

// checkUnicast refuses a subnet that overlaps a special block: such a pool
// would hand out (or route) loopback, multicast, link-local or unspecified
// addresses.
func checkUnicast(errs *problems, field, s string, subnet netip.Prefix) bool {
	for _, b := range specialBlocks() {
		if b.prefix.Overlaps(subnet) {
			errs.addf("%s %q: overlaps %s, %s: a pool hands out unicast host addresses; %s",
				field, s, b.prefix, b.what, "want a private or global unicast subnet, e.g. 10.10.0.0/24 or fd00:10::/64")
			return false
		}
	}
	return true
}
