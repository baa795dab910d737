package service

import (
	"strings"
	"testing"
)

// TestStatusReportsStore: STATUS is unhealthy, with the reason, while the
// lease store cannot write, whatever pool is asked about.
func TestStatusReportsStore(t *testing.T) {
	svc, _ := newService(t, "lab-1x1", onePool(), nil)
	for _, pool := range []string{"", "rail"} {
		st, err := svc.Status(pool)
		if err != nil || !st.Healthy {
			t.Fatalf("Status(%q) of a writable store = %+v, %v; want healthy", pool, st, err)
		}
	}
	svc.alloc.Close()
	for _, pool := range []string{"", "rail"} {
		st, err := svc.Status(pool)
		if err != nil {
			t.Fatal(err)
		}
		if st.Healthy || !strings.Contains(st.Reason, "lease store") || !strings.Contains(st.Reason, "leases.db") {
			t.Errorf("Status(%q) with the store closed = %+v, want unhealthy naming the lease store", pool, st)
		}
	}
	if err := svc.StoreHealth(); err == nil {
		t.Error("StoreHealth with the store closed = nil")
	}
}
