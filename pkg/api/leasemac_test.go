package api

import (
	"net"
	"testing"
)

func TestLeaseMAC(t *testing.T) {
	a, again, other, otherIf := LeaseMAC("sb1", "net1"), LeaseMAC("sb1", "net1"), LeaseMAC("sb2", "net1"), LeaseMAC("sb1", "net1-1")
	if a.String() != again.String() {
		t.Errorf("not stable: %s then %s", a, again)
	}
	if a.String() == other.String() || a.String() == otherIf.String() {
		t.Errorf("two leases share %s", a)
	}
	if a[0]&1 != 0 || a[0]&2 == 0 {
		t.Errorf("%s is not a locally administered unicast MAC", a)
	}
	if !IsLeaseMAC(a) || IsLeaseMAC(net.HardwareAddr{2, 0, 0, 0, 0, 1}) {
		t.Errorf("IsLeaseMAC wrong")
	}
}
