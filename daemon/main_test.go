package main

import (
	"regexp"
	"slices"
	"testing"
)

// TestUsageListsEveryCommand: raild --help names every command raild
// runs, and runs every command it names.
func TestUsageListsEveryCommand(t *testing.T) {
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^  raild (\S+)`).FindAllStringSubmatch(usage, -1) {
		if !slices.Contains(listed, m[1]) {
			listed = append(listed, m[1])
		}
	}
	cmds := commands()
	for name := range cmds {
		if !slices.Contains(listed, name) {
			t.Errorf("raild %s runs but raild --help does not list it", name)
		}
	}
	for _, name := range listed {
		if cmds[name] == nil {
			t.Errorf("raild --help lists raild %s, which is no command", name)
		}
	}
}
