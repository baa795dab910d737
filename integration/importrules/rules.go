// Package importrules checks who may import whom in a module laid out as
// Rail is (DESIGN.md, "Layout and who may import whom"): the CNI plugins
// build on pkg alone, ipam and pkg/topology stand on nothing else of the
// project, pkg stays below daemon, ipam and the plugins, and nothing the
// product ships or tests with leans on integration/. `make lint` runs it
// on this module (go test ./integration/importrules/).
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

const (
	rulePlugin  = "a plugin builds on pkg only (never daemon, ipam or k8s.io: the exec'd binary stays small and fast)"
	ruleBase    = "ipam and pkg/topology import nothing else of the project"
	rulePkg     = "pkg sits below daemon, ipam and the plugins and imports none of them"
	ruleProduct = "product code and its tests never import integration/ (move a shared test helper beside the package it fakes, as daemon/podinfo/podinfotest)"
)

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
		out = append(out, g.checkPlugin(p)...)
		out = append(out, g.checkBase(p)...)
		out = append(out, g.checkPkg(p)...)
		out = append(out, g.checkProduct(p)...)
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

func (g graph) checkPlugin(p Package) []Violation {
	if !under(g.rel(p.ImportPath), "plugins") {
		return nil
	}
	bad := func(path string) bool { return under(g.rel(path), "daemon", "ipam") || under(path, "k8s.io") }
	var out []Violation
	for _, d := range p.Deps {
		if bad(d) {
			out = append(out, Violation{From: p.ImportPath, To: d, Via: g.chain(p.ImportPath, d), Rule: rulePlugin})
		}
	}
	for _, imp := range slices.Concat(p.TestImports, p.XTestImports) { // its tests too
		if bad(imp) && !slices.Contains(p.Deps, imp) {
			out = append(out, Violation{From: p.ImportPath + " (tests)", To: imp, Rule: rulePlugin})
		}
	}
	return out
}

func (g graph) checkBase(p Package) []Violation {
	rel := g.rel(p.ImportPath)
	root := ""
	switch {
	case under(rel, "ipam"):
		root = "ipam"
	case under(rel, "pkg/topology"):
		root = "pkg/topology"
	default:
		return nil
	}
	return g.direct(p, allImports(p), ruleBase, func(to string) bool { return !under(to, root) })
}

func (g graph) checkPkg(p Package) []Violation {
	if !under(g.rel(p.ImportPath), "pkg") {
		return nil
	}
	return g.direct(p, allImports(p), rulePkg, func(to string) bool { return under(to, "daemon", "ipam", "plugins") })
}

// checkProduct: a package outside integration/ never imports it, in its
// build or in its tests.
func (g graph) checkProduct(p Package) []Violation {
	if under(g.rel(p.ImportPath), "integration") {
		return nil
	}
	return g.direct(p, allImports(p), ruleProduct, func(to string) bool { return under(to, "integration") })
}

// direct returns a violation for each import of p inside the module whose
// module-relative path bad refuses.
func (g graph) direct(p Package, imports []string, rule string, bad func(rel string) bool) []Violation {
	var out []Violation
	for _, imp := range imports {
		if to := g.rel(imp); to != "" && to != g.rel(p.ImportPath) && bad(to) {
			out = append(out, Violation{From: p.ImportPath, To: imp, Rule: rule})
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
