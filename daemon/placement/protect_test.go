package placement

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// fakeGuard is the inventory's view of the node's own NICs: last (as the
// snapshot read them) and now (what an ADD-time read finds).
type fakeGuard struct {
	last, now map[string]topology.Protection
	rechecks  int
}

func (g *fakeGuard) Protected() map[string]topology.Protection { return g.last }

func (g *fakeGuard) Recheck(nics []topology.NIC) (map[string]topology.Protection, error) {
	g.rechecks++
	out := map[string]topology.Protection{}
	for _, n := range nics {
		if p, ok := g.now[n.Name]; ok {
			out[n.Name] = p
		}
	}
	return out, nil
}

var defaultRoute = topology.Protection{Reasons: []topology.ProtectReason{
	{Kind: topology.ProtectDefaultRoute, Detail: "default via 10.99.0.1 dev ens3np0"}}}

// frontendNode is the frontend-lag machine: the front-end NIC mlx5_2
// carries the default route (what netlink finds), the LAG mlx5_bond_0 is
// bond0 over two PFs (what sysfs shows).
func frontendNode(t *testing.T) (*Node, *fakeGuard) {
	t.Helper()
	n := node(t, "frontend-lag")
	protected := n.Machine.LinkProtection()
	if !protected["mlx5_bond_0"].LAG {
		t.Fatalf("sysfs does not show mlx5_bond_0 as a LAG: %v", protected)
	}
	protected["mlx5_2"] = defaultRoute
	g := &fakeGuard{last: protected, now: protected}
	n.Guard = g
	return n, g
}

func moveTaken(nics ...string) func(*Usage) {
	return func(u *Usage) {
		for _, nic := range nics {
			u.Add(nic, "s/"+nic, "s", "ns/holder", api.ModeMove)
		}
	}
}

// TestChooseNeverTakesTheNodesNICs: with the GPU's own NICs taken, the
// next closest ones are the node's front-end NIC and its LAG; move mode
// skips both, macvlan may use the LAG (a child on the bond) but not the
// front-end NIC. Every move case here handed out the node's NIC before
// protection existed.
func TestChooseNeverTakesTheNodesNICs(t *testing.T) {
	n, _ := frontendNode(t)
	tests := []struct {
		name    string
		in      Input
		use     func(*Usage)
		want    string
		wantErr []string
	}{
		{name: "move: the default-route NIC is not the next NIC",
			in: Input{GPUs: []int{0}, Mode: api.ModeMove}, use: moveTaken("mlx5_0", "mlx5_1"), want: "mlx5_3:SYS"},
		{name: "move: the LAG's bond master is not the next NIC",
			in: Input{GPUs: []int{4}, Mode: api.ModeMove}, use: moveTaken("mlx5_3", "mlx5_4"), want: "mlx5_0:SYS"},
		{name: "move: every GPU of a full node, none gets the node's NICs",
			in:   Input{GPUs: []int{0, 2, 4, 6}, Mode: api.ModeMove},
			want: "mlx5_0:PIX,mlx5_1:PIX,mlx5_3:PIX,mlx5_4:PIX"},
		{name: "macvlan: the LAG serves as a child on the bond",
			in: Input{GPUs: []int{4}, Mode: api.ModeMacvlan}, want: "mlx5_bond_0:PHB"},
		{name: "macvlan: the front-end NIC is not shared unless the config says so",
			in: Input{GPUs: []int{0}, Mode: api.ModeMacvlan}, want: "mlx5_bond_0:SYS"},
		{name: "selector naming the node's NIC: refused with the reason",
			in:      Input{GPUs: []int{0}, Mode: api.ModeMove, NICs: []string{"mlx5_2"}},
			wantErr: []string{"mlx5_2 protected: carries the host's default route (default via 10.99.0.1 dev ens3np0); move never takes the node's own NIC"}},
		{name: "the refusal names the next NIC tried and the bound",
			in:  Input{GPUs: []int{0}, Mode: api.ModeMove, MaxDistance: bound(topology.PHB, "netconf maxDistance")},
			use: moveTaken("mlx5_0", "mlx5_1"),
			wantErr: []string{"GPU 0: the closest free NIC mlx5_3 is SYS, beyond netconf maxDistance PHB",
				"mlx5_2 PHB (protected: carries the host's default route", "mlx5_1 PHB (moved into pod ns/holder)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			use := NewUsage()
			if tt.use != nil {
				tt.use(use)
			}
			picks, err := n.Choose(tt.in, use)
			checkPicks(t, picks, err, tt.want, tt.wantErr)
		})
	}
}

// TestChooseRechecksAtAdd: an address and default route that came on the
// front-end NIC after the last read are found when the ADD reads the NIC
// it chose again; the ADD then places elsewhere.
func TestChooseRechecksAtAdd(t *testing.T) {
	n, g := frontendNode(t)
	g.last = n.Machine.LinkProtection() // the snapshot predates the address
	picks, err := n.Choose(Input{GPUs: []int{0}, Mode: api.ModeMove}, usageOf(moveTaken("mlx5_0", "mlx5_1")))
	checkPicks(t, picks, err, "mlx5_3:SYS", nil)
	if g.rechecks != 2 {
		t.Fatalf("%d rechecks, want 2 (mlx5_2 refused, then mlx5_3 confirmed)", g.rechecks)
	}
}

// TestChooseSkipsEnslavedPFs: the front-end card's PFs are ports of a
// plain bond (each keeps its RDMA device); sysfs alone (no Guard) keeps
// them from every mode. Before protection, GPU0 got mlx5_1.
func TestChooseSkipsEnslavedPFs(t *testing.T) {
	host := fakesys.Host{Roots: []fakesys.Root{{Bus: 0x15, NUMA: 0, Ports: []fakesys.Slot{
		{Switch: []fakesys.Slot{{GPU: &fakesys.GPU{Model: "NVIDIA H100 80GB HBM3"}},
			{Card: &fakesys.Card{Model: "ConnectX-7", Funcs: []fakesys.Func{{RDMA: "mlx5_0", LinkLayer: "Ethernet"}}}}}},
		{Card: &fakesys.Card{Model: "ConnectX-6 Dx", Master: "bond1", Funcs: []fakesys.Func{
			{RDMA: "mlx5_1", LinkLayer: "Ethernet"}, {RDMA: "mlx5_2", LinkLayer: "Ethernet"}}}},
		{Card: &fakesys.Card{Model: "ConnectX-6 Dx", Funcs: []fakesys.Func{{RDMA: "mlx5_3", LinkLayer: "Ethernet"}}}},
	}}}}
	root := filepath.Join(t.TempDir(), "root")
	if _, err := fakesys.WriteHost(root, "enslaved", host, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{Machine: m}
	for _, mode := range []api.Mode{api.ModeMove, api.ModeMacvlan} {
		picks, err := n.Choose(Input{GPUs: []int{0}, Mode: mode}, usageOf(moveTaken("mlx5_0")))
		checkPicks(t, picks, err, "mlx5_3:PHB", nil)
	}
	_, err = n.Choose(Input{GPUs: []int{0}, Mode: api.ModeMacvlan, NICs: []string{"mlx5_1"}}, NewUsage())
	if err == nil || !strings.Contains(err.Error(), "enslaved to bond1 (bond)") {
		t.Fatalf("macvlan on an enslaved PF: %v, want a refusal naming bond1", err)
	}
}

func usageOf(fill func(*Usage)) *Usage {
	u := NewUsage()
	fill(u)
	return u
}

// checkPicks compares picks with "nic:CLASS,..." or the error with every
// piece of wantErr.
func checkPicks(t *testing.T, picks []Pick, err error, want string, wantErr []string) {
	t.Helper()
	if len(wantErr) > 0 {
		if err == nil {
			t.Fatalf("picked %v, want an error with %q", picks, wantErr)
		}
		for _, w := range wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q lacks %q", err, w)
			}
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range picks {
		got = append(got, p.NIC.Name+":"+p.Class.String())
	}
	if strings.Join(got, ",") != want {
		t.Fatalf("picked %s, want %s", strings.Join(got, ","), want)
	}
}

// TestChooseWithinNodeLimits: a node class's NICs and modes bound every
// request on the node.
func TestChooseWithinNodeLimits(t *testing.T) {
	n := node(t, "v100x4-cx5-dualport")
	tests := []struct {
		name    string
		limits  Limits
		in      Input
		want    string
		wantErr []string
	}{
		{name: "no limits", in: Input{GPUs: []int{2}, Mode: api.ModeMove}, want: "mlx5_0:SYS"},
		{name: "class NICs", limits: Limits{NICs: []string{"mlx5_0"}, Source: "node class v100"},
			in: Input{GPUs: []int{0}, Mode: api.ModeIPoIB}, want: "mlx5_0:PIX"},
		{name: "selector outside the class NICs", limits: Limits{NICs: []string{"mlx5_0"}, Source: "node class v100"},
			in:      Input{GPUs: []int{0}, Mode: api.ModeMove, NICs: []string{"mlx5_1"}},
			wantErr: []string{"the NICs this node serves (node class v100 nics: mlx5_0) have no NIC in common"}},
		{name: "class NIC not on the node", limits: Limits{NICs: []string{"mlx5_7"}, Source: "node class v100"},
			in: Input{Mode: api.ModeMove}, wantErr: []string{`node class v100 nics: "mlx5_7" is not an RDMA device on this node`}},
		{name: "mode not served", limits: Limits{Modes: []api.Mode{api.ModeMove}, Source: "node class v100"},
			in: Input{GPUs: []int{0}, Mode: api.ModeIPoIB}, wantErr: []string{"mode ipoib is not served on this node (node class v100 modes: move)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n.Limits = tt.limits
			picks, err := n.Choose(tt.in, NewUsage())
			checkPicks(t, picks, err, tt.want, tt.wantErr)
		})
	}
}
