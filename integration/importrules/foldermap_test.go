package importrules

import (
	"os"
	"path"
	"slices"
	"strings"
	"testing"
)

// TestFolderMapNamesEveryPackage: docs/architecture.md's folder map names
// every package of the module: as an entry of its own (with or without a
// trailing "/", a main package by its main.go), in its parent's entry by its name (a test helper such as
// podinfotest), or below an entry that ends in "/" (integration/: the
// end-to-end tests and their stand-ins).
func TestFolderMapNamesEveryPackage(t *testing.T) {
	module, pkgs, err := List("../..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	entries := folderMap(t, string(doc))
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if !strings.HasPrefix(p.ImportPath, module) || rel == "" {
			continue
		}
		if !named(entries, rel) {
			t.Errorf("package %s is not in docs/architecture.md's folder map: add a line for it (or name it in its parent's)", rel)
		}
	}
}

// folderMap reads the code block under "## Folders": each entry's path
// (its first word) and its text (the words after it, on its lines).
func folderMap(t *testing.T, doc string) map[string]string {
	t.Helper()
	_, section, found := strings.Cut(doc, "\n## Folders\n")
	if !found {
		t.Fatal(`docs/architecture.md has no section "Folders"`)
	}
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```")
	entries := map[string]string{}
	last := ""
	for line := range strings.Lines(block) {
		if line != "" && line[0] != ' ' {
			fields := strings.Fields(line)
			last = fields[0]
			entries[last] = strings.Join(fields[1:], " ")
			continue
		}
		entries[last] += " " + strings.TrimSpace(line)
	}
	if len(entries) == 0 {
		t.Fatal("docs/architecture.md's folder map has no entries")
	}
	return entries
}

// named says whether the entries name the package rel.
func named(entries map[string]string, rel string) bool {
	if _, ok := entries[rel]; ok {
		return true
	}
	if _, ok := entries[rel+"/"]; ok {
		return true
	}
	if _, ok := entries[rel+"/main.go"]; ok {
		return true
	}
	if text, ok := entries[path.Dir(rel)]; ok && slices.Contains(strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == ',' || r == ':' || r == ';' || r == '(' || r == ')'
	}), path.Base(rel)) {
		return true
	}
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if _, ok := entries[dir+"/"]; ok {
			return true
		}
	}
	return false
}
