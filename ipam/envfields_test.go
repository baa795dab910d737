package ipam

import "testing"

// TestLeaseKeepsPKeyAndPrimaryAcrossRestart: the IPoIB P_Key and the pod's
// primary interface a request names are in its lease, and still are when
// the store is opened again (raild restarted), for NRI's NCCL_IB_PKEY and
// NCCL_SOCKET_IFNAME; a request that names neither leaves them empty.
func TestLeaseKeepsPKeyAndPrimaryAcrossRestart(t *testing.T) {
	pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.60.0.0/24"}}, "node1")
	a, path := openTest(t, pools, Options{})
	named := request("s1", "rail0", "p")
	named.Mode, named.PKey, named.PrimaryIf = "ipoib", 0x8001, "net0"
	if _, err := a.AllocateMany([]Request{named, request("s2", "rail0", "p")}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]Lease{}
	for _, l := range reopen(t, path, pools, Options{}).Leases() {
		got[l.Sandbox] = l
	}
	if l := got["s1"]; l.PKey != 0x8001 || l.PrimaryIf != "net0" {
		t.Errorf("s1 after reopen: pkey %#x, primary %q; want 0x8001, net0", l.PKey, l.PrimaryIf)
	}
	if l := got["s2"]; l.PKey != 0 || l.PrimaryIf != "" {
		t.Errorf("s2 after reopen: pkey %#x, primary %q; want none", l.PKey, l.PrimaryIf)
	}
}
