package api

import (
	"crypto/sha256"
	"fmt"
	"net"
)

// LeaseGUID is the node and port GUID an InfiniBand VF gets for the lease
// of (sandbox, pod interface) when the runtime names none: stable for the
// lease (a repeated ADD sets the same, so a subnet manager's partition
// membership keyed on it holds), never another lease's (48 bits of
// SHA-256 of the key), and recognisably rail's: it starts with the two
// bytes LeaseMAC starts with (0x0e: locally administered, unicast).
func LeaseGUID(sandbox, ifName string) net.HardwareAddr {
	sum := sha256.Sum256([]byte(sandbox + "\x00" + ifName))
	return net.HardwareAddr{leaseMAC0, leaseMAC1, sum[0], sum[1], sum[2], sum[3], sum[4], sum[5]}
}

// CheckGUID checks a GUID given for an InfiniBand VF: eight bytes, neither
// all zero (no GUID) nor all ones (the value that tells mlx5 to drop an
// assigned one).
func CheckGUID(guid net.HardwareAddr) error {
	if len(guid) != 8 || isZero(guid) || isAllOnes(guid) {
		return fmt.Errorf("infinibandGUID %q is not a usable GUID: use eight bytes like 00:11:22:33:44:55:66:77 (not all zero, not ff:ff:ff:ff:ff:ff:ff:ff)", guid)
	}
	return nil
}

func isAllOnes(b []byte) bool {
	for _, x := range b {
		if x != 0xff {
			return false
		}
	}
	return len(b) > 0
}
