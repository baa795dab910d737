package netns

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

// BenchmarkPassThroughAdd measures what chained rail adds to the ADD of a
// pod that does not get RDMA (no GPUs, no annotation): ptp alone, ptp then
// a plugin that does nothing (the exec floor of a chained plugin), and ptp
// then rail (which asks raild and hands the previous result back),
// interleaved in one run. It reports the p50 and p90 of each and the p50
// differences (the goal is under 2 ms); DELs are outside the timing.
func BenchmarkPassThroughAdd(b *testing.B) {
	node := newNode(b, harness.NodeOptions{Machine: "lab-1x1"})
	primary, err := node.Network("ptponly", "0.3.1", node.PTP("10.90.0.0/24"))
	if err != nil {
		b.Fatal(err)
	}
	chained, err := node.Network("ptprail", "0.3.1", node.PTP("10.91.0.0/24"), node.RailPlugin(map[string]any{"mode": api.ModeMove}))
	if err != nil {
		b.Fatal(err)
	}
	noop, err := node.Network("ptpnoop", "0.3.1", node.PTP("10.92.0.0/24"), map[string]any{"type": "cni-noop"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bins.Rail, "cni-noop")); err != nil {
		b.Skip("no cni-noop next to the rail binaries (RAIL_BIN): the floor cannot be measured")
	}
	pod := newPod(b, node, "web", nil)
	var alone, withNoop, withRail []time.Duration
	for b.Loop() {
		alone = append(alone, timedAdd(b, primary, pod))
		withNoop = append(withNoop, timedAdd(b, noop, pod))
		withRail = append(withRail, timedAdd(b, chained, pod))
	}
	if held := leases(b, node); len(held) != 0 {
		b.Fatalf("pass-through pods hold leases: %+v", held)
	}
	p50a, p50r := percentile(alone, 50), percentile(withRail, 50)
	b.ReportMetric(ms(p50a), "ptp-p50-ms")
	b.ReportMetric(ms(percentile(alone, 90)), "ptp-p90-ms")
	b.ReportMetric(ms(p50r), "ptp+rail-p50-ms")
	b.ReportMetric(ms(percentile(withRail, 90)), "ptp+rail-p90-ms")
	b.ReportMetric(ms(p50r-p50a), "added-p50-ms")
	b.ReportMetric(ms(percentile(withNoop, 50)-p50a), "noop-added-p50-ms")
}

// timedAdd times one ADD, then deletes the pod's network untimed.
func timedAdd(b *testing.B, network *harness.Network, pod *harness.Pod) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	if _, err := network.Add(ctx, pod); err != nil {
		b.Fatalf("ADD %s: %v", network.List.Name, err)
	}
	took := time.Since(start)
	if err := network.Del(ctx, pod); err != nil {
		b.Fatalf("DEL %s: %v", network.List.Name, err)
	}
	return took
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
