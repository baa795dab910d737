package railpool

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/railcni/rail/ipam"
)

// report is one call of Follow's report.
type report struct {
	claim Claim
	err   error
}

// TestFollow: RailPools created after start are claimed and added to the
// running pools; one with no block left is reported, not added.
func TestFollow(t *testing.T) {
	c := newCluster(t, []*corev1.Node{node("n1", "u1", nil), node("n2", "u2", nil)}, pool("first", "10.1.0.0/24", 26))
	res, err := c.claimer("n1").NodePools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	configPools := []ipam.PoolConfig{{Name: "cfg", Subnet: "10.9.0.0/24"}}
	pools, err := ipam.NewPools(append(configPools, res.Pools...), "n1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan report, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.claimer("n1").Follow(ctx, time.Hour, pools, configPools, func(cl Claim, err error) { reports <- report{cl, err} })
	}()
	defer func() { cancel(); <-done }()

	c.create(t, PoolResource, pool("later", "10.2.0.0/16", 24))
	if r := next(t, reports); r.err != nil || r.claim.Pool != "later" {
		t.Fatalf("report %+v, want pool later added", r)
	}
	if p, ok := pools.Get("later"); !ok || p.Size() == 0 {
		t.Fatalf("pool later is not in the running pools (%v)", pools.Names())
	}
	// n2 takes the only block of "single" before n1 sees it.
	single := pool("single", "10.3.0.0/24", 24)
	if _, err := c.claimerWithPool(t, "n2", single); err != nil {
		t.Fatal(err)
	}
	var ex *ExhaustedError
	if r := next(t, reports); !errors.As(r.err, &ex) || ex.Pool != "single" {
		t.Fatalf("report %+v, want pool single exhausted", r)
	}
	if _, ok := pools.Get("single"); ok {
		t.Error("exhausted pool single was added")
	}
}

// claimerWithPool lets node claim a block of p before p exists in the
// API server, then creates p: other nodes' Follow sees p already held.
func (c *cluster) claimerWithPool(t *testing.T, nodeName string, p *RailPool) (Claim, error) {
	t.Helper()
	l, err := check(p, nodeName)
	if err != nil {
		return Claim{}, err
	}
	n, err := c.kube.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{})
	if err != nil {
		return Claim{}, err
	}
	cl, err := c.claimer(nodeName).claim(context.Background(), p, l, n)
	if err == nil {
		c.create(t, PoolResource, p)
	}
	return cl, err
}

func next(t *testing.T, reports <-chan report) report {
	t.Helper()
	select {
	case r := <-reports:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no report within 30s")
	}
	return report{}
}
