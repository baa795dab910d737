// Package importrules checks who may import whom in a module laid out as
// Rail is: the rows of docs/architecture.md's table "Who may import whom,
// and why", as data (Rules; TestDocTableIsTheRules holds the doc to them).
// The CNI plugins build on pkg alone, ipam, ipam/store and pkg/topology
// stand on nothing else of the project, pkg stays below daemon, ipam and
// the plugins, and nothing the product ships or tests with leans on
// integration/. `make lint` runs it on this module (go test
// ./integration/importrules/).
package importrules

import (
	"fmt"
	"slices"
	"strings"
)

// Package is what the rules read of one package, as `go list -deps -json`
// reports it: its direct imports (the build's, and its tests' on top) and
// every package its build depends on, directly or not.
type Package struct {
	ImportPath   string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// Violation is one import the rules forbid: From imports To (directly, or
// through Via when To is a dependency of a dependency).
type Violation struct {
	From, To string
	Via      []string
	Rule     string
}

func (v Violation) String() string {
	how := "imports"
	if len(v.Via) > 0 {
		how = "depends on (through " + strings.Join(v.Via, " -> ") + ")"
	}
	return fmt.Sprintf("%s %s %s: %s", v.From, how, v.To, v.Rule)
}

// Rule is one row of docs/architecture.md's table "Who may import whom,
// and why": its three cells as the doc writes them, and what the check
// reads of them. A package may always import its own row's dirs.
type Rule struct {
	Package, May, Why string // the row, cell by cell (TestDocTableIsTheRules)

	// In are the module-relative dirs (each with everything below it)
	// whose packages the row covers; empty: every package of the module
	// but those under NotIn.
	In, NotIn []string
	// Only, when not nil, are the only dirs of the project (with what is
	// below them) the packages may import besides their own row's dirs;
	// an empty non-nil Only: nothing else of the project.
	Only []string
	// TestsAlso are dirs of the project their tests may import besides
	// Only (a test helper of pkg's).
	TestsAlso []string
	// Never are dirs of the project they never import.
	Never []string
	// External are import paths outside the module (with what is below
	// them) they never depend on.
	External []string
	// Deps: the row covers everything the package's build links (a
	// binary's), not only what it imports.
	Deps bool
}

func (r Rule) String() string {
	return strings.NewReplacer("`", "").Replace(r.Package + " may import " + r.May + ": " + r.Why)
}

// Rules are the table's rows, in its order.
var Rules = []Rule{
	{Package: "`plugins/*`", May: "`pkg/...` only — never `daemon`, `ipam`, `k8s.io/...`",
		Why: "the exec'd binary stays small and starts fast (a process per pod per verb)",
		In:  []string{"plugins"}, Only: []string{"pkg"}, Never: []string{"daemon", "ipam"}, External: []string{"k8s.io"}, Deps: true},
	{Package: "`daemon/...`", May: "`ipam`, `pkg/...`, client-go and the other libraries",
		Why: "raild is the one long-running process",
		In:  []string{"daemon"}, Only: []string{"ipam", "pkg"}},
	{Package: "`ipam`", May: "`ipam/store` only",
		Why: "pools and leases are tested alone, without netlink or gRPC",
		In:  []string{"ipam"}, Only: []string{}},
	{Package: "`ipam/store`", May: "nothing else of the project (ipam builds on it, not the other way)",
		Why: "the file format, its checks and its writer are tested alone",
		In:  []string{"ipam/store"}, Only: []string{}},
	{Package: "`pkg/topology`", May: "nothing else of the project",
		Why: "the only reader of sysfs/procfs; machines as folders",
		In:  []string{"pkg/topology"}, Only: []string{}},
	{Package: "`pkg/api`", May: "`pkg/topology`",
		Why: "the wire carries topology reports",
		In:  []string{"pkg/api"}, Only: []string{"pkg/topology"}},
	{Package: "`pkg/rdma`", May: "`pkg/api`, `pkg/nsfs`, `pkg/topology` (its tests also `pkg/netnstest`)",
		Why: "the RDMA netns mode's wire name; a pod's netns opened as every netns from input is; the prefix of pods' rxe names",
		In:  []string{"pkg/rdma"}, Only: []string{"pkg/api", "pkg/nsfs", "pkg/topology"}, TestsAlso: []string{"pkg/netnstest"}},
	{Package: "`pkg/vfpf`", May: "`pkg/api`",
		Why: "the VF settings' wire types; pkg/attach runs vfpf's steps, not the other way",
		In:  []string{"pkg/vfpf"}, Only: []string{"pkg/api"}},
	{Package: "`pkg/vfnetdev`", May: "`pkg/vfpf` (its tests also `pkg/api`, `pkg/topology`)",
		Why: "a VF's MAC and GUIDs are set through vfpf's PF control; pkg/attach runs vfnetdev's steps, not the other way",
		In:  []string{"pkg/vfnetdev"}, Only: []string{"pkg/vfpf"}, TestsAlso: []string{"pkg/api", "pkg/topology"}},
	{Package: "`pkg/...`", May: "`pkg/...` and libraries — never `daemon`, `ipam`, `plugins`",
		Why: "the plugins build on `pkg`: what it imports, they carry",
		In:  []string{"pkg"}, Only: []string{"pkg"}},
	{Package: "product code and its tests", May: "never `integration/...`",
		Why:   "tests' stand-ins stay out of the product; a stand-in product tests share sits beside the package it fakes (`daemon/podinfo/podinfotest`, the kubelet's PodResources)",
		NotIn: []string{"integration"}, Never: []string{"integration"}},
}

// graph is the module's packages by module-relative path, plus every
// package's direct imports (for the chain a dependency comes through).
type graph struct {
	module  string
	pkgs    []Package
	imports map[string][]string
}

// Check returns every violation in pkgs, a `go list -deps` answer for the
// module whose path is module (packages outside it only feed the chains).
func Check(module string, pkgs []Package) []Violation {
	g := graph{module: module, imports: map[string][]string{}}
	for _, p := range pkgs {
		g.imports[p.ImportPath] = p.Imports
		if g.rel(p.ImportPath) != "" {
			g.pkgs = append(g.pkgs, p)
		}
	}
	var out []Violation
	for _, p := range g.pkgs {
		for _, r := range Rules {
			out = append(out, g.check(r, p)...)
		}
	}
	return out
}

// rel is path relative to the module ("." for its root), or "" outside it.
func (g graph) rel(path string) string {
	switch {
	case path == g.module:
		return "."
	case strings.HasPrefix(path, g.module+"/"):
		return path[len(g.module)+1:]
	}
	return ""
}

// under says whether the module-relative path rel is dir or inside it.
func under(rel string, dirs ...string) bool {
	for _, d := range dirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// covers says whether r covers the module-relative package rel.
func (r Rule) covers(rel string) bool {
	if under(rel, r.NotIn...) {
		return false
	}
	return len(r.In) == 0 || under(rel, r.In...)
}

// refuses says whether r forbids its packages (their tests, when
// test) the project package to (module-relative).
func (r Rule) refuses(to string, test bool) bool {
	if under(to, r.Never...) {
		return true
	}
	if test && under(to, r.TestsAlso...) {
		return false
	}
	return r.Only != nil && !under(to, r.In...) && !under(to, r.Only...)
}

// check is every import of p (its build's and its tests') that r forbids
// and, for a rule on what a binary links, every dependency.
func (g graph) check(r Rule, p Package) []Violation {
	if !r.covers(g.rel(p.ImportPath)) {
		return nil
	}
	bad := func(path string, test bool) bool {
		if to := g.rel(path); to != "" {
			return to != g.rel(p.ImportPath) && r.refuses(to, test)
		}
		return under(path, r.External...)
	}
	var out []Violation
	if r.Deps {
		for _, d := range p.Deps {
			if bad(d, false) {
				out = append(out, Violation{From: p.ImportPath, To: d, Via: g.chain(p.ImportPath, d), Rule: r.String()})
			}
		}
		for _, imp := range slices.Concat(p.TestImports, p.XTestImports) { // its tests too
			if bad(imp, true) && !slices.Contains(p.Deps, imp) {
				out = append(out, Violation{From: p.ImportPath + " (tests)", To: imp, Rule: r.String()})
			}
		}
		return out
	}
	for _, imp := range allImports(p) {
		if bad(imp, !slices.Contains(p.Imports, imp)) {
			out = append(out, Violation{From: p.ImportPath, To: imp, Rule: r.String()})
		}
	}
	return out
}

func allImports(p Package) []string {
	all := slices.Concat(p.Imports, p.TestImports, p.XTestImports)
	slices.Sort(all)
	return slices.Compact(all)
}

// chain is the packages between from and to on one shortest import path
// (empty when from imports to directly or no path is known).
func (g graph) chain(from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range g.imports[cur] {
			if _, seen := prev[next]; seen {
				continue
			}
			prev[next] = cur
			if next == to {
				var via []string
				for at := cur; at != from; at = prev[at] {
					via = append([]string{at}, via...)
				}
				return via
			}
			queue = append(queue, next)
		}
	}
	return nil
}
