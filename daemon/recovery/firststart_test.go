package recovery

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/daemon/config"
	"github.com/railcni/rail/daemon/statedir"
	"github.com/railcni/rail/ipam"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netnstest"
)

// TestCheckLostStore: with pods holding addresses rail gave them (a rail
// interface in a real pod netns), a state dir whose lease store was
// removed is refused with the way out; a genuine first start, a node whose
// netns hold nothing of raild's pools, and a store rebuilt by `raild
// recover` start.
func TestCheckLostStore(t *testing.T) {
	netnstest.RequireRoot(t, "creates network namespaces")
	podDir, otherDir, emptyDir := t.TempDir(), t.TempDir(), t.TempDir()
	pod, host, parent := railPod(t, podDir, "10.66.0.5/24")
	other := newNetns(t, otherDir)
	addVeth(t, other, "eth0", "10.66.0.9/24") // no rail alias: another plugin's, no proof
	attachIn(t, host, other, attach.Spec{Mode: attach.ModeMacvlan, Parent: parent, Name: "rail0",
		Addresses: []netip.Prefix{netip.MustParsePrefix("10.99.0.5/24")}}) // rail's, but in no pool of this raild
	pools, err := ipam.NewPools([]ipam.PoolConfig{{Name: "prefill", Subnet: "10.66.0.0/24"}}, "")
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		netnsDir string
		prepare  func(t *testing.T, cfg *config.Config) // the state dir before raild starts
		want     []string                               // in the refusal; none: raild may start
	}{
		{name: "first start, no pods", netnsDir: emptyDir, prepare: func(*testing.T, *config.Config) {}},
		{name: "first start, no netns dir", netnsDir: filepath.Join(emptyDir, "missing"), prepare: func(*testing.T, *config.Config) {}},
		{name: "first start beside other pods", netnsDir: otherDir, prepare: func(*testing.T, *config.Config) {}},
		{name: "state dir wiped, pod holds a pool address", netnsDir: podDir, prepare: func(*testing.T, *config.Config) {},
			want: []string{"not raild's first start", "rail0 in pod netns " + pod + " holds 10.66.0.5/24 of pool prefill", "raild recover", "--netns-dir " + podDir}},
		{name: "lease files removed, NIC records left", netnsDir: emptyDir, prepare: func(t *testing.T, cfg *config.Config) {
			writeFile(t, statedir.RecordsFile(cfg.StateDir), "[]")
		}, want: []string{"an earlier raild's NIC records ", "inventory.json", "raild recover"}},
		{name: "store there: not this check's business", netnsDir: podDir, prepare: func(t *testing.T, cfg *config.Config) {
			writeFile(t, statedir.LeaseStorePath(cfg.StateDir), "") // damaged: OpenLeaseStore says so
		}},
		{name: "store rebuilt by raild recover", netnsDir: podDir, prepare: func(t *testing.T, cfg *config.Config) {
			cfgPath := filepath.Join(t.TempDir(), "raild.yaml")
			writeFile(t, cfgPath, "pools:\n  - name: prefill\n    subnet: 10.66.0.0/24\n")
			var out bytes.Buffer
			if err := run([]string{"--config", cfgPath, "--state-dir", cfg.StateDir, "--netns-dir", cfg.NetnsDir}, &out); err != nil {
				t.Fatalf("raild recover: %v\n%s", err, &out)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{StateDir: filepath.Join(t.TempDir(), "state"), NetnsDir: tt.netnsDir}
			if err := cfg.Finish(); err != nil {
				t.Fatal(err)
			}
			if err := statedir.Ensure(cfg.StateDir); err != nil {
				t.Fatal(err)
			}
			tt.prepare(t, cfg)
			problems, err := CheckLostStore(cfg, pools)
			if len(problems) > 0 {
				t.Errorf("problems reading the netns: %v", problems)
			}
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("CheckLostStore = %v, want a start", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckLostStore let raild start empty; want a refusal with %q", tt.want)
			}
			for _, w := range append(tt.want, "--state-dir "+cfg.StateDir) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q: want %q in it", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("refusal %q: want one line", err)
			}
		})
	}
}

// railPod makes a pod netns under nsDir holding rail0, a macvlan rail made
// (its alias records the owner, pool prefill) with addr; its parent sits
// in a stand-in host netns.
func railPod(t *testing.T, nsDir, addr string) (pod, host, parent string) {
	t.Helper()
	host = newNetns(t, t.TempDir())
	parent = rsName(t)
	addVeth(t, host, parent)
	pod = newNetns(t, nsDir)
	attachIn(t, host, pod, attach.Spec{Mode: attach.ModeMacvlan, Parent: parent, Name: "rail0",
		Addresses: []netip.Prefix{netip.MustParsePrefix(addr)}, Owner: attach.Owner{Sandbox: "4f0c9a11", Pool: "prefill"}})
	return pod, host, parent
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
