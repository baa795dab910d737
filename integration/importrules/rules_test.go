package importrules

import (
	"slices"
	"testing"
)

// TestModuleFollowsImportRules is the check `make lint` runs: Rail's own
// packages keep DESIGN.md's rules.
func TestModuleFollowsImportRules(t *testing.T) {
	module, pkgs, err := List("../..")
	if err != nil {
		t.Fatal(err)
	}
	if module != "github.com/railcni/rail" || !slices.ContainsFunc(pkgs, func(p Package) bool { return p.ImportPath == module+"/plugins/rail" }) {
		t.Fatalf("go list answered for module %q with %d packages, without plugins/rail: the check would check nothing", module, len(pkgs))
	}
	for _, v := range Check(module, pkgs) {
		t.Error(v)
	}
}

// TestCatchesViolations runs the whole check (go list and the rules) on a
// module that breaks every rule once and keeps it elsewhere: each
// violation is reported, and nothing else.
func TestCatchesViolations(t *testing.T) {
	module, pkgs, err := List("testdata/violations")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range Check(module, pkgs) {
		got = append(got, v.String())
	}
	want := []string{
		"example.com/m/plugins/bad depends on (through example.com/m/pkg/leaky) example.com/m/ipam: " + rulePlugin,
		"example.com/m/plugins/bad imports k8s.io/fake: " + rulePlugin,
		"example.com/m/ipam imports example.com/m/pkg/api: " + ruleBase,
		"example.com/m/pkg/topology imports example.com/m/pkg/api: " + ruleBase,
		"example.com/m/pkg/leaky imports example.com/m/ipam: " + rulePkg,
		"example.com/m/daemon/x imports example.com/m/integration/helper: " + ruleProduct,
		"example.com/m/daemon/y imports example.com/m/integration/helper: " + ruleProduct,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%q\nwant:\n%q", got, want)
	}
}

func TestCheck(t *testing.T) {
	const m = "example.com/m"
	tests := []struct {
		name string
		pkgs []Package
		want []string
	}{
		{"plugin on pkg and the standard library", []Package{
			{ImportPath: m + "/plugins/rail", Imports: []string{m + "/pkg/api", "net"}, Deps: []string{m + "/pkg/api", "net"}},
		}, nil},
		{"plugin importing daemon", []Package{
			{ImportPath: m + "/plugins/rail", Imports: []string{m + "/daemon/server"}, Deps: []string{m + "/daemon/server"}},
		}, []string{m + "/plugins/rail imports " + m + "/daemon/server: " + rulePlugin}},
		{"plugin reaching k8s.io through a third party", []Package{
			{ImportPath: m + "/plugins/rail", Imports: []string{"example.org/lib"}, Deps: []string{"example.org/lib", "k8s.io/api/core/v1"}},
			{ImportPath: "example.org/lib", Imports: []string{"k8s.io/api/core/v1"}},
		}, []string{m + "/plugins/rail depends on (through example.org/lib) k8s.io/api/core/v1: " + rulePlugin}},
		{"plugin test importing ipam", []Package{
			{ImportPath: m + "/plugins/rail-ipam", XTestImports: []string{m + "/ipam"}},
		}, []string{m + "/plugins/rail-ipam (tests) imports " + m + "/ipam: " + rulePlugin}},
		{"a name that only starts like a forbidden one", []Package{
			{ImportPath: m + "/plugins/rail", Imports: []string{m + "/ipamx", "k8s.iox/a"}, Deps: []string{m + "/ipamx", "k8s.iox/a"}},
			{ImportPath: m + "/ipamx", Imports: []string{m + "/pkg/api"}},
		}, nil},
		{"ipam within itself", []Package{
			{ImportPath: m + "/ipam/store", Imports: []string{m + "/ipam"}, TestImports: []string{m + "/ipam/store/storetest"}},
		}, nil},
		{"ipam subpackage importing pkg", []Package{
			{ImportPath: m + "/ipam/store", Imports: []string{m + "/pkg/topology"}},
		}, []string{m + "/ipam/store imports " + m + "/pkg/topology: " + ruleBase}},
		{"topology and its fake machines", []Package{
			{ImportPath: m + "/pkg/topology", TestImports: []string{m + "/pkg/topology/fakesys"}},
			{ImportPath: m + "/pkg/topology/fakesys", Imports: []string{m + "/pkg/topology"}},
		}, nil},
		{"fake machines importing pkg/api", []Package{
			{ImportPath: m + "/pkg/topology/fakesys", Imports: []string{m + "/pkg/api"}},
		}, []string{m + "/pkg/topology/fakesys imports " + m + "/pkg/api: " + ruleBase}},
		{"pkg test importing daemon", []Package{
			{ImportPath: m + "/pkg/attach", XTestImports: []string{m + "/daemon/inventory"}},
		}, []string{m + "/pkg/attach imports " + m + "/daemon/inventory: " + rulePkg}},
		{"daemon importing ipam, pkg and its own test helper", []Package{
			{ImportPath: m + "/daemon/nri", Imports: []string{m + "/ipam", m + "/pkg/api"}, TestImports: []string{m + "/daemon/podinfo/podinfotest"}},
		}, nil},
		{"the raild main package's test importing integration", []Package{
			{ImportPath: m + "/daemon", TestImports: []string{m + "/integration/harness"}},
		}, []string{m + "/daemon imports " + m + "/integration/harness: " + ruleProduct}},
		{"integration importing everything", []Package{
			{ImportPath: m + "/integration/netns", Imports: []string{m + "/daemon/serve", m + "/ipam", m + "/integration/harness"}},
		}, nil},
		{"packages outside the module are not judged", []Package{
			{ImportPath: "example.org/plugins/x", Imports: []string{"example.org/daemon"}, Deps: []string{"example.org/daemon", "k8s.io/a"}},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range Check(m, tt.pkgs) {
				got = append(got, v.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}
