package maketargets

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDocumentedTargetsExist runs `make -n` on every target a page of the
// project names, so the docs and the Makefile cannot drift apart.
func TestDocumentedTargetsExist(t *testing.T) {
	pages, err := Pages("../..")
	if err != nil {
		t.Fatal(err)
	}
	where := map[string][]string{}
	for _, page := range pages {
		uses, err := Scan(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range uses {
			where[u.Target] = append(where[u.Target], fmt.Sprintf("%s:%d", strings.TrimPrefix(u.File, "../../"), u.Line))
		}
	}
	for _, must := range []string{"demo", "test", "test-k8s"} { // the README's own: a scan finding nothing checks nothing
		if where[must] == nil {
			t.Fatalf("no page names make %s (pages: %v): the scan is broken", must, pages)
		}
	}
	for target, at := range where {
		t.Run(target, func(t *testing.T) {
			if err := dryRun("../..", target); err != nil {
				t.Errorf("make %s, named at %s: %v", target, strings.Join(at, ", "), err)
			}
		})
	}
}

// TestDryRunCatchesAMissingTarget: the check above can fail.
func TestDryRunCatchesAMissingTarget(t *testing.T) {
	err := dryRun("../..", "no-such-target")
	if err == nil || !strings.Contains(err.Error(), "No rule to make target") {
		t.Fatalf("make -n no-such-target: %v, want make's \"No rule to make target\"", err)
	}
}

// dryRun runs `make -n target` in dir: make prints the commands without
// running them, and fails when the target does not exist.
func dryRun(dir, target string) error {
	out, err := exec.Command("make", "-n", "-C", dir, target).CombinedOutput()
	if err != nil {
		return fmt.Errorf("make -n %s: %w: %s", target, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func TestScan(t *testing.T) {
	uses, err := Scan("testdata/page.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range uses {
		got = append(got, fmt.Sprintf("%d %s", u.Line, u.Target))
	}
	want := []string{"3 demo", "6 build", "7 bench", "8 fuzz", "8 test-cri", "8 lint", "12 test", "12 image-name"}
	if !slices.Equal(got, want) {
		t.Errorf("Scan = %q, want %q", got, want)
	}
}

func TestTargets(t *testing.T) {
	tests := []struct {
		shell string
		want  []string
	}{
		{"make test", []string{"test"}},
		{"sudo make bench BENCH_FLAGS=--quick", []string{"bench"}},
		{"RAIL_CYCLES=50 make test", []string{"test"}},
		{"make -s -C /repo image-name", []string{"image-name"}},
		{"make -f Other.mk build test", []string{"build", "test"}},
		{"make build && ./bin/raild topo", []string{"build"}},
		{"make demo    # the main job: make sure", []string{"demo"}},
		{"go test ./... ; ip netns add x", nil},
		{"cmake install", nil},
		{"make", nil},
		{"$ sudo make demo", []string{"demo"}},
		{"go vet ./... && make lint", []string{"lint"}},
		{"who imports whom, maketargets that every documented make target exists", nil},
		{"runs make -n on every target", nil},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			if got := Targets(tt.shell); !slices.Equal(got, tt.want) {
				t.Errorf("Targets(%q) = %q, want %q", tt.shell, got, tt.want)
			}
		})
	}
}
