package api

import (
	"crypto/sha256"
	"net"
)

// The two bytes that start every MAC LeaseMAC makes: locally
// administered, unicast (0x0e), then 'r' (0x72). A VF whose admin MAC
// starts so was set by rail; one that no lease owns has leaked.
const (
	leaseMAC0 = 0x0e
	leaseMAC1 = 0x72
)

// LeaseMAC is the admin MAC a VF gets for the lease of (sandbox, pod
// interface): stable for the lease (a repeated ADD sets the same), never
// the one of another lease (32 bits of SHA-256 of the key), so a VF reused
// by the next pod never carries the old pod's MAC.
func LeaseMAC(sandbox, ifName string) net.HardwareAddr {
	sum := sha256.Sum256([]byte(sandbox + "\x00" + ifName))
	return net.HardwareAddr{leaseMAC0, leaseMAC1, sum[0], sum[1], sum[2], sum[3]}
}

// IsLeaseMAC reports whether mac has the form LeaseMAC gives.
func IsLeaseMAC(mac net.HardwareAddr) bool {
	return len(mac) == 6 && mac[0] == leaseMAC0 && mac[1] == leaseMAC1
}
