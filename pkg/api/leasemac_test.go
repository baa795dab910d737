package api

import (
	"net"
	"strings"
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

func TestLeaseGUID(t *testing.T) {
	a, again, other, otherIf := LeaseGUID("sb1", "net1"), LeaseGUID("sb1", "net1"), LeaseGUID("sb2", "net1"), LeaseGUID("sb1", "net1-1")
	if a.String() != again.String() {
		t.Errorf("not stable: %s then %s", a, again)
	}
	if a.String() == other.String() || a.String() == otherIf.String() {
		t.Errorf("two leases share %s", a)
	}
	if err := CheckGUID(a); err != nil || len(a) != 8 || a[0]&2 == 0 {
		t.Errorf("%s is not a locally administered GUID: %v", a, err)
	}
}

func TestCheckGUID(t *testing.T) {
	tests := []struct {
		guid string
		ok   bool
	}{
		{"00:11:22:33:44:55:66:77", true},
		{"00:00:00:00:00:00:00:00", false},
		{"ff:ff:ff:ff:ff:ff:ff:ff", false},
		{"00:11:22:33:44:55", false},
	}
	for _, tt := range tests {
		guid, err := net.ParseMAC(tt.guid)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckGUID(guid)
		if (err == nil) != tt.ok {
			t.Errorf("CheckGUID(%s) = %v, want ok %v", tt.guid, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "infinibandGUID") {
			t.Errorf("error %q does not name the field", err)
		}
	}
}
