package nri

import (
	"net/netip"
	"testing"

	nriapi "github.com/containerd/nri/pkg/api"
)

// TestGIDCacheFilledOffHotPath: RunPodSandbox fills the cache; after that
// CreateContainer does not read sysfs (the table is deleted to prove it),
// and RemovePodSandbox forgets the entry.
func TestGIDCacheFilledOffHotPath(t *testing.T) {
	root := t.TempDir()
	writeGIDs(t, root, "mlx5_0", []string{"fe80:0000:0000:0000:0a00:27ff:fe00:0001", "0000:0000:0000:0000:0000:ffff:0a38:0005"}, nil)
	st := newFakeState()
	st.add("s1", "macvlan", "10.56.0.5/24", "mlx5_0")
	p, _ := newTestPlugin(t, Config{}, root, st)
	sandbox := pod("s1", "default", nil)
	if err := p.RunPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	if err := removeAll(root); err != nil {
		t.Fatal(err)
	}
	adj, _, err := p.CreateContainer(t.Context(), sandbox, ctr("app"))
	if err != nil {
		t.Fatal(err)
	}
	if got := summarize(adj).Env[envNCCLGIDIndex]; got != "1" {
		t.Fatalf("%s = %q from the cache, want 1", envNCCLGIDIndex, got)
	}
	if err := p.RemovePodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.gids.get(gidKey{nic: "mlx5_0", addr: netip.MustParseAddr("10.56.0.5")}); ok {
		t.Fatal("RemovePodSandbox left the GID cache entry")
	}
}

// TestSynchronizeRebuildsGIDCache: after a (re)connection the cache holds
// the running macvlan pods' indices, and nothing of pods that are gone.
func TestSynchronizeRebuildsGIDCache(t *testing.T) {
	root := t.TempDir()
	writeGIDs(t, root, "mlx5_1", []string{"fe80:0000:0000:0000:0a00:27ff:fe00:0001", "0000:0000:0000:0000:0000:ffff:0a38:0007"}, nil)
	st := newFakeState()
	st.add("live", "macvlan", "10.56.0.7/24", "mlx5_1")
	p, _ := newTestPlugin(t, Config{}, root, st)
	stale := gidKey{nic: "mlx5_1", addr: netip.MustParseAddr("10.56.0.99")}
	p.gids.idx[stale] = 5
	p.gids.keys["gone"] = []gidKey{stale}
	if _, err := p.Synchronize(t.Context(), []*nriapi.PodSandbox{pod("live", "default", nil)}, nil); err != nil {
		t.Fatal(err)
	}
	if i, ok := p.gids.get(gidKey{nic: "mlx5_1", addr: netip.MustParseAddr("10.56.0.7")}); !ok || i != 1 {
		t.Fatalf("live pod's GID index = %d, %v; want 1", i, ok)
	}
	if _, ok := p.gids.get(stale); ok {
		t.Fatal("Synchronize kept a gone pod's entry")
	}
}
