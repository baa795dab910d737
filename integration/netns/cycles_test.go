package netns

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

const defaultCycles = 1000

func cycleCount(t *testing.T) int {
	t.Helper()
	v := os.Getenv("RAIL_CYCLES")
	if v == "" {
		return defaultCycles
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("RAIL_CYCLES=%q: want a positive number of ADD/DEL cycles", v)
	}
	return n
}

// TestCyclesLeakNothing runs many pod lifecycles (new netns, ADD of ptp →
// rail, DEL, netns removed) and then requires the node netns unchanged
// (links, addresses, routes, rules), no lease, no pod netns and no more
// open files in raild than after the first cycle.
func TestCyclesLeakNothing(t *testing.T) {
	for _, mode := range []api.Mode{api.ModeMove, api.ModeMacvlan} {
		t.Run(string(mode), func(t *testing.T) {
			count := cycleCount(t)
			node := newNode(t, harness.NodeOptions{Machine: "lab-1x1"})
			before := snapshot(t, node)
			network := chain(t, node, "1.1.0", map[string]any{"mode": mode})
			cycle(t, node, network, 0)
			baseline, err := harness.OpenFDs(node.Raild.PID())
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for i := 1; i < count; i++ {
				cycle(t, node, network, i)
			}
			if count > 1 {
				elapsed := time.Since(start)
				t.Logf("%s: %d ADD/DEL cycles in %s (%s per pod: netns, ADD ptp+rail, DEL, netns removed)",
					mode, count-1, elapsed.Round(time.Millisecond), (elapsed / time.Duration(count-1)).Round(time.Microsecond))
			}
			requireClean(t, node, before)
			requireNoPodNetns(t, node)
			requireFDsAtMost(t, node, baseline)
		})
	}
}

func cycle(t *testing.T, node *harness.Node, network *harness.Network, i int) {
	t.Helper()
	pod := newPod(t, node, fmt.Sprintf("c%d", i), map[string]string{api.AnnotationGPUs: "0"})
	ctx := context.Background()
	if _, err := network.Add(ctx, pod); err != nil {
		t.Fatalf("cycle %d: ADD: %v", i, err)
	}
	if err := network.Del(ctx, pod); err != nil {
		t.Fatalf("cycle %d: DEL: %v", i, err)
	}
	if err := node.DeletePodNetns(pod); err != nil {
		t.Fatalf("cycle %d: %v", i, err)
	}
}

func requireNoPodNetns(t *testing.T, node *harness.Node) {
	t.Helper()
	left, err := node.PodNetnsLeft()
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("pod netns left: %v", left)
	}
}

// requireFDsAtMost waits briefly for raild to close connections the last
// plugin left, then requires no kind of file open more often than before.
func requireFDsAtMost(t *testing.T, node *harness.Node, baseline []string) {
	t.Helper()
	want := harness.FDCounts(baseline)
	var got map[string]int
	deadline := time.Now().Add(settle)
	for {
		fds, err := harness.OpenFDs(node.Raild.PID())
		if err != nil {
			t.Fatal(err)
		}
		got = harness.FDCounts(fds)
		if fdsWithin(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !fdsWithin(got, want) {
		t.Errorf("raild has more open files than after the first cycle: now %v, then %v", got, want)
	}
}

func fdsWithin(got, want map[string]int) bool {
	for kind, n := range got {
		if n > want[kind] {
			return false
		}
	}
	return true
}
