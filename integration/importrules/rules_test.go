package importrules

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestModuleFollowsImportRules is the check `make lint` runs: Rail's own
// packages keep docs/architecture.md's import table.
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
		"example.com/m/plugins/bad depends on (through example.com/m/pkg/leaky) example.com/m/ipam: " + rule("plugins/*"),
		"example.com/m/plugins/bad imports k8s.io/fake: " + rule("plugins/*"),
		"example.com/m/ipam imports example.com/m/pkg/api: " + rule("ipam"),
		"example.com/m/pkg/topology imports example.com/m/pkg/api: " + rule("pkg/topology"),
		"example.com/m/pkg/leaky imports example.com/m/ipam: " + rule("pkg/..."),
		"example.com/m/daemon/x imports example.com/m/integration/helper: " + rule("daemon/..."),
		"example.com/m/daemon/x imports example.com/m/integration/helper: " + rule("product code and its tests"),
		"example.com/m/daemon/y imports example.com/m/integration/helper: " + rule("daemon/..."),
		"example.com/m/daemon/y imports example.com/m/integration/helper: " + rule("product code and its tests"),
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
		}, []string{m + "/plugins/rail imports " + m + "/daemon/server: " + rule("plugins/*")}},
		{"plugin reaching k8s.io through a third party", []Package{
			{ImportPath: m + "/plugins/rail", Imports: []string{"example.org/lib"}, Deps: []string{"example.org/lib", "k8s.io/api/core/v1"}},
			{ImportPath: "example.org/lib", Imports: []string{"k8s.io/api/core/v1"}},
		}, []string{m + "/plugins/rail depends on (through example.org/lib) k8s.io/api/core/v1: " + rule("plugins/*")}},
		{"plugin test importing ipam", []Package{
			{ImportPath: m + "/plugins/rail-ipam", XTestImports: []string{m + "/ipam"}},
		}, []string{m + "/plugins/rail-ipam (tests) imports " + m + "/ipam: " + rule("plugins/*")}},
		{"a name that only starts like a forbidden one", []Package{
			{ImportPath: m + "/plugins/rail", Imports: []string{m + "/pkg/ipamx", "k8s.iox/a"}, Deps: []string{m + "/pkg/ipamx", "k8s.iox/a"}},
			{ImportPath: m + "/pkg/ipamx", Imports: []string{m + "/pkg/api"}},
		}, nil},
		{"a name that only starts like an allowed one", []Package{
			{ImportPath: m + "/plugins/rail", Imports: []string{m + "/pkgx"}, Deps: []string{m + "/pkgx"}},
		}, []string{m + "/plugins/rail imports " + m + "/pkgx: " + rule("plugins/*")}},
		{"pkg/rdma's tests on the netns helper, its build not", []Package{
			{ImportPath: m + "/pkg/rdma", Imports: []string{m + "/pkg/api", m + "/pkg/netnstest"}, TestImports: []string{m + "/pkg/netnstest"}},
		}, []string{m + "/pkg/rdma imports " + m + "/pkg/netnstest: " + rule("pkg/rdma")}},
		{"ipam within itself", []Package{
			{ImportPath: m + "/ipam", Imports: []string{m + "/ipam/store"}},
			{ImportPath: m + "/ipam/store", TestImports: []string{m + "/ipam/store/storetest"}},
		}, nil},
		{"the lease store importing ipam", []Package{
			{ImportPath: m + "/ipam/store", Imports: []string{m + "/ipam"}},
		}, []string{m + "/ipam/store imports " + m + "/ipam: " + rule("ipam/store")}},
		{"pkg/api importing pkg/rdma", []Package{
			{ImportPath: m + "/pkg/api", Imports: []string{m + "/pkg/topology", m + "/pkg/rdma"}},
		}, []string{m + "/pkg/api imports " + m + "/pkg/rdma: " + rule("pkg/api")}},
		{"pkg/rdma importing pkg/attach", []Package{
			{ImportPath: m + "/pkg/rdma", Imports: []string{m + "/pkg/api", m + "/pkg/attach"}},
		}, []string{m + "/pkg/rdma imports " + m + "/pkg/attach: " + rule("pkg/rdma")}},
		{"daemon importing a plugin", []Package{
			{ImportPath: m + "/daemon/serve", Imports: []string{m + "/plugins/rail"}},
		}, []string{m + "/daemon/serve imports " + m + "/plugins/rail: " + rule("daemon/...")}},
		{"ipam subpackage importing pkg", []Package{
			{ImportPath: m + "/ipam/store", Imports: []string{m + "/pkg/topology"}},
		}, []string{m + "/ipam/store imports " + m + "/pkg/topology: " + rule("ipam"), m + "/ipam/store imports " + m + "/pkg/topology: " + rule("ipam/store")}},
		{"topology and its fake machines", []Package{
			{ImportPath: m + "/pkg/topology", TestImports: []string{m + "/pkg/topology/fakesys"}},
			{ImportPath: m + "/pkg/topology/fakesys", Imports: []string{m + "/pkg/topology"}},
		}, nil},
		{"fake machines importing pkg/api", []Package{
			{ImportPath: m + "/pkg/topology/fakesys", Imports: []string{m + "/pkg/api"}},
		}, []string{m + "/pkg/topology/fakesys imports " + m + "/pkg/api: " + rule("pkg/topology")}},
		{"pkg test importing daemon", []Package{
			{ImportPath: m + "/pkg/attach", XTestImports: []string{m + "/daemon/inventory"}},
		}, []string{m + "/pkg/attach imports " + m + "/daemon/inventory: " + rule("pkg/...")}},
		{"daemon importing ipam, pkg and its own test helper", []Package{
			{ImportPath: m + "/daemon/nri", Imports: []string{m + "/ipam", m + "/pkg/api"}, TestImports: []string{m + "/daemon/podinfo/podinfotest"}},
		}, nil},
		{"the raild main package's test importing integration", []Package{
			{ImportPath: m + "/daemon", TestImports: []string{m + "/integration/harness"}},
		}, []string{m + "/daemon imports " + m + "/integration/harness: " + rule("daemon/..."), m + "/daemon imports " + m + "/integration/harness: " + rule("product code and its tests")}},
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

// rule is the rule of the doc's row whose package cell is pkg (without
// its backquotes), as a violation names it.
func rule(pkg string) string {
	for _, r := range Rules {
		if strings.Trim(r.Package, "`") == pkg {
			return r.String()
		}
	}
	panic("no rule for " + pkg)
}

// TestDocTableIsTheRules: docs/architecture.md's table "Who may import
// whom, and why" is Rules, row by row and cell by cell, so the doc shows
// what the check checks.
func TestDocTableIsTheRules(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(doc), "\n## Who may import whom, and why\n")
	if !found {
		t.Fatal(`docs/architecture.md has no section "Who may import whom, and why"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows [][3]string
	for line := range strings.Lines(section) {
		cells := strings.Split(strings.TrimSpace(line), " | ")
		if len(cells) != 3 || !strings.HasPrefix(cells[0], "| ") || !strings.HasSuffix(cells[2], " |") {
			continue
		}
		row := [3]string{strings.TrimPrefix(cells[0], "| "), cells[1], strings.TrimSuffix(cells[2], " |")}
		if row[0] != "package" {
			rows = append(rows, row)
		}
	}
	var want [][3]string
	for _, r := range Rules {
		want = append(want, [3]string{r.Package, r.May, r.Why})
	}
	if !slices.Equal(rows, want) {
		t.Errorf("the doc's table:\n%q\nthe rules:\n%q", rows, want)
	}
}
