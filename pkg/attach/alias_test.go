package attach

import (
	"errors"
	"strings"
	"testing"
)

func TestAliasRoundTrip(t *testing.T) {
	tests := []struct {
		rec  aliasRecord
		want string
	}{
		{aliasRecord{Host: "ens1f0np0", Name: "rail0", MTU: 1500, Up: true}, "rail:ens1f0np0:name=rail0:mtu=1500:up=1"},
		{aliasRecord{Host: "enp65s0f1", Name: "net1-1", MTU: 9000}, "rail:enp65s0f1:name=net1-1:mtu=9000:up=0"},
		{aliasRecord{Host: "ens2f0np0", Name: "rail1", MTU: 4200, Up: true, RDMA: "mlx5_2"}, "rail:ens2f0np0:name=rail1:mtu=4200:up=1:rdma=mlx5_2"},
		{aliasRecord{Host: "ib0", Name: "net1", Kind: "ipoib"}, "rail:ib0:name=net1:kind=ipoib"},
		{aliasRecord{Host: "ib1", Name: "net2", Kind: "ipoib", Table: 4294967295}, "rail:ib1:name=net2:kind=ipoib:table=4294967295"},
		{aliasRecord{Host: "nic0", Name: "rail0", MTU: 1500, RDMA: "mlx5_0", Table: 100}, "rail:nic0:name=rail0:mtu=1500:up=0:rdma=mlx5_0:table=100"},
		{aliasRecord{Host: "eth.100", Name: "net2", Kind: "macvlan"}, "rail:eth.100:name=net2:kind=macvlan"},
		{aliasRecord{Host: "nic0", Name: "rail0", Kind: "macvlan", Table: 7, Owner: Owner{Sandbox: "4f0c9a", CNIIfName: "eth0", Network: "railnet", Pool: "prefill", NIC: "mlx5_0"}},
			"rail:nic0:name=rail0:kind=macvlan:table=7:sb=4f0c9a:att=eth0:net=railnet:pool=prefill:nic=mlx5_0"},
		{aliasRecord{Host: "nic0", Name: "rail1", MTU: 9000, Up: true, Owner: Owner{Sandbox: "sb1", Network: "n"}},
			"rail:nic0:name=rail1:mtu=9000:up=1:sb=sb1:net=n"},
		// port 2 of a dual-port HCA, moved with its device (exclusive mode)
		{aliasRecord{Host: "ibp26s0d1", Name: "rail0", MTU: 4092, Up: true, RDMA: "mlx4_0", Owner: Owner{Sandbox: "sb2", NIC: "mlx4_0", NICPort: "2"}},
			"rail:ibp26s0d1:name=rail0:mtu=4092:up=1:rdma=mlx4_0:sb=sb2:nic=mlx4_0:nicport=2"},
	}
	for _, tt := range tests {
		s := tt.rec.String()
		if s != tt.want {
			t.Errorf("String() = %q, want %q", s, tt.want)
		}
		if len(s) > maxAliasLen {
			t.Errorf("alias %q is longer than the kernel keeps", s)
		}
		got, ok := parseAlias(s)
		if !ok || got != tt.rec {
			t.Errorf("parseAlias(%q) = %+v, %v; want %+v", s, got, ok, tt.rec)
		}
	}
}

func TestParseAliasRejects(t *testing.T) {
	for _, alias := range []string{
		"",
		"uplink to switch 3",
		"rail:",
		"rail:eth0",                                 // no name, no state
		"rail:eth0:name=rail0",                      // moved device without mtu/up
		"rail:eth0:name=rail0:mtu=0:up=1",           // mtu 0
		"rail:eth0:name=rail0:mtu=x:up=1",           // mtu not a number
		"rail:eth0:name=rail0:mtu=1500:up=yes",      // up not 0/1
		"rail:eth0:name=rail0:kind=sriov",           // unknown kind
		"rail:eth/0:name=rail0:mtu=1500:up=1",       // bad host name
		"rail:eth0:name=rail0:mtu=1500:mtu=1400",    // repeated key
		"rail:eth0:name=rail0:mtu=1500:up",          // field without '='
		"rail:eth0:name=rail0:mtu=1500:up=1:rdma=",  // empty rdma device
		"rail:eth0:name=rail0:kind=macvlan:table=0", // table 0
		"rail:eth0:name=rail0:kind=macvlan:table=-3",
		"rail:eth0:name=rail0:kind=macvlan:table=4294967296",
	} {
		if rec, ok := parseAlias(alias); ok {
			t.Errorf("parseAlias(%q) = %+v, want not ours", alias, rec)
		}
	}
	if rec, ok := parseAlias("rail:eth0:name=rail0:mtu=1500:up=1:future=x"); !ok || rec.MTU != 1500 {
		t.Errorf("unknown keys from a newer rail must be ignored, got %+v %v", rec, ok)
	}
}

func TestAliasBelongsTo(t *testing.T) {
	moved := aliasRecord{Host: "nic0", Name: "rail0", MTU: 1500}
	child := aliasRecord{Host: "nic0", Name: "net1", Kind: "macvlan"}
	tests := []struct {
		rec  aliasRecord
		spec Spec
		want bool
	}{
		{moved, Spec{Mode: ModeMove, Parent: "nic0", Name: "rail0"}, true},
		{moved, Spec{Mode: ModeMove, Parent: "nic0", Name: "renamed"}, true}, // the NIC is the identity
		{moved, Spec{Mode: ModeMove, Parent: "nic1", Name: "rail0"}, false},
		{moved, Spec{Mode: ModeMacvlan, Parent: "nic0", Name: "rail0"}, false},
		{child, Spec{Mode: ModeMacvlan, Parent: "nic0", Name: "net1"}, true},
		{child, Spec{Mode: ModeMacvlan, Parent: "nic0", Name: "net2"}, false}, // another child of the same NIC
		{child, Spec{Mode: ModeIPoIB, Parent: "nic0", Name: "net1"}, false},
		{moved, Spec{Mode: ModeMove, Name: "rail0"}, true}, // no Parent: the recorded pod name decides
		{moved, Spec{Mode: ModeMove, Name: "rail1"}, false},
		{child, Spec{Mode: ModeMacvlan, Name: "net1"}, true},
		{child, Spec{Mode: ModeMove, Name: "net1"}, false},
	}
	for _, tt := range tests {
		if got := tt.rec.belongsTo(tt.spec); got != tt.want {
			t.Errorf("%+v belongsTo %+v = %v, want %v", tt.rec, tt.spec, got, tt.want)
		}
	}
}

func TestUndoListRunsNewestFirstAndJoinsErrors(t *testing.T) {
	var u undoList
	var order []string
	for _, step := range []string{"a", "b", "c"} {
		u.push(step, func() error {
			order = append(order, step)
			if step == "b" {
				return errors.New("boom")
			}
			return nil
		})
	}
	err := u.run()
	if got := strings.Join(order, ""); got != "cba" {
		t.Errorf("order %q, want cba", got)
	}
	if err == nil || !strings.Contains(err.Error(), "undo b: boom") || !errors.Is(err, ErrUndoIncomplete) {
		t.Errorf("run() = %v, want the failure of b, marked ErrUndoIncomplete", err)
	}
	if err := u.run(); err != nil || len(order) != 3 {
		t.Errorf("second run() = %v after %d steps, want nothing to do", err, len(order))
	}
}

func TestReadAlias(t *testing.T) {
	tests := []struct {
		alias string
		want  Recorded
		ok    bool
	}{
		{"rail:nic0:name=rail0:mtu=1500:up=1:sb=abc:att=eth0:net=railnet:pool=p:nic=mlx5_0",
			Recorded{Mode: ModeMove, Host: "nic0", Name: "rail0", Owner: Owner{Sandbox: "abc", CNIIfName: "eth0", Network: "railnet", Pool: "p", NIC: "mlx5_0"}}, true},
		{"rail:nic0:name=net1:kind=macvlan", Recorded{Mode: ModeMacvlan, Host: "nic0", Name: "net1"}, true},
		{"rail:nic0:name=net1:kind=macvlan:sb=", Recorded{}, false}, // empty owner field
		{"rail:nic0:name=net1:kind=macvlan:sb=a:sb=b", Recorded{}, false},
		{"uplink", Recorded{}, false},
	}
	for _, tt := range tests {
		got, ok := ReadAlias(tt.alias)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ReadAlias(%q) = %+v, %v; want %+v, %v", tt.alias, got, ok, tt.want, tt.ok)
		}
	}
}

func TestValidateOwner(t *testing.T) {
	base := Spec{Mode: ModeMacvlan, Parent: "nic0", Name: "rail0"}
	long := strings.Repeat("n", 200)
	tests := []struct {
		owner Owner
		want  string // "" : valid
	}{
		{Owner{Sandbox: strings.Repeat("a", 64), CNIIfName: "eth0", Network: "railnet", Pool: "prefill", NIC: "mlx5_0"}, ""},
		{Owner{Network: "a:b"}, "Owner net"},
		{Owner{Pool: "p=1"}, "Owner pool"},
		{Owner{Sandbox: "a b"}, "Owner sb"},
		{Owner{Sandbox: strings.Repeat("a", 64), Network: long}, "does not fit"},
	}
	for _, tt := range tests {
		s := base
		s.Owner = tt.owner
		err := validate(s)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("validate(%+v) = %v, want nil", tt.owner, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("validate(%+v) = %v, want an error with %q", tt.owner, err, tt.want)
		}
	}
}
