package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/integration/harness"
)

// testBins is set once by TestMain before any test runs, then only read:
// the rail binaries built from this tree and the upstream plugins.
var testBins struct{ rail, plugins string }

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if os.Geteuid() != 0 {
		return m.Run() // the root tests skip with the reason
	}
	plugins, err := harness.UpstreamPluginDir(harness.DefaultCacheDir())
	if err != nil {
		fmt.Fprintf(os.Stderr, "rail-bench tests: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "rail-bench-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "rail-bench tests: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := harness.BuildRail(dir); err != nil {
		fmt.Fprintf(os.Stderr, "rail-bench tests: %v\n", err)
		return 1
	}
	testBins.rail, testBins.plugins = dir, plugins
	return m.Run()
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options // bin and plugins are not compared
		wantErr string
	}{
		{name: "full by default", want: fullSettings()},
		{name: "quick", args: []string{"--quick"}, want: quickSettings()},
		{name: "overrides win over quick", args: []string{"--quick", "--rounds", "7", "--bursts", "2, 9", "--burst-reps", "2"},
			want: options{rounds: 7, bursts: []int{2, 9}, burstReps: 2, warmup: quickSettings().warmup}},
		{name: "burst size not a number", args: []string{"--bursts", "50,x"}, wantErr: `--bursts "50,x": "x" is not a burst size`},
		{name: "burst too large for the node", args: []string{"--bursts", "500"}, wantErr: "want pod counts from 1 to 200"},
		{name: "empty burst size", args: []string{"--bursts", "50,"}, wantErr: `"" is not a burst size`},
		{name: "negative rounds", args: []string{"--rounds", "-1"}, wantErr: "--rounds and --burst-reps must be positive"},
		{name: "stray argument", args: []string{"now"}, wantErr: `unexpected argument "now"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.rounds != tt.want.rounds || !slices.Equal(got.bursts, tt.want.bursts) ||
				got.burstReps != tt.want.burstReps || got.warmup != tt.want.warmup {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func millis(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100-i) * time.Millisecond // reversed: must sort
	}
	tests := []struct {
		name string
		in   []time.Duration
		p    int
		want time.Duration
	}{
		{name: "none", in: nil, p: 50, want: 0},
		{name: "one", in: millis(7), p: 99, want: 7 * time.Millisecond},
		{name: "median of an odd count", in: millis(3, 1, 2), p: 50, want: 2 * time.Millisecond},
		{name: "median of an even count is the lower middle", in: millis(4, 1, 3, 2), p: 50, want: 2 * time.Millisecond},
		{name: "p99 of 100", in: hundred, p: 99, want: 99 * time.Millisecond},
		{name: "p99 of 4 is the largest", in: millis(4, 1, 3, 2), p: 99, want: 4 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.in, tt.p); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCells(t *testing.T) {
	tests := []struct {
		name      string
		num, den  []time.Duration
		wantValue string
		wantRatio string
	}{
		{name: "pair", num: millis(30, 45), den: millis(60, 30), wantValue: "30.0 / 45.0", wantRatio: "0.50× / 1.50×"},
		{name: "small and large", num: []time.Duration{250 * time.Microsecond, 2500 * time.Millisecond}, den: millis(1, 1000),
			wantValue: "0.250 / 2500", wantRatio: "0.25× / 2.50×"},
		{name: "no figure", num: nil, den: millis(1), wantValue: "—", wantRatio: "—"},
		{name: "zero floor", num: millis(3), den: []time.Duration{0}, wantValue: "3.00", wantRatio: "—"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := values(tt.num); got != tt.wantValue {
				t.Errorf("values %q, want %q", got, tt.wantValue)
			}
			if got := ratios(tt.num, tt.den); got != tt.wantRatio {
				t.Errorf("ratios %q, want %q", got, tt.wantRatio)
			}
		})
	}
}

// TestFloorRatioRows: every floor measured gives rail's ADD and DEL a
// ratio to it, and the mode's floor is exec + kernel + write.
func TestFloorRatioRows(t *testing.T) {
	fig := func(add, del int) figures {
		return figures{add: stat{p50: time.Duration(add) * time.Millisecond}, del: stat{p50: time.Duration(del) * time.Millisecond}}
	}
	kernel, write := fig(2, 10), fig(1, 1)
	tests := []struct {
		name   string
		kernel *figures
		write  *figures
		want   []string
	}{
		{name: "every floor", kernel: &kernel, write: &write, want: []string{
			"| s | ADD / DEL p50 vs the kernel's own work for the mode | 12.0 / 26.0 | 24.0 / 39.0 | 0.50× / 0.67× | 2.00 / 10.0 | 6.00× / 2.60× |\n",
			"|  | ADD / DEL p50 vs one durable write | 12.0 / 26.0 | 24.0 / 39.0 | 0.50× / 0.67× | 1.00 / 1.00 | 12.00× / 26.00× |\n",
			"|  | ADD / DEL p50 vs the mode's floor (exec + kernel + durable write) | 12.0 / 26.0 | 24.0 / 39.0 | 0.50× / 0.67× | 9.00 / 15.0 | 1.33× / 1.73× |\n",
		}},
		{name: "no write floor", kernel: &kernel, want: []string{
			"| s | ADD / DEL p50 vs the kernel's own work for the mode | 12.0 / 26.0 | 24.0 / 39.0 | 0.50× / 0.67× | 2.00 / 10.0 | 6.00× / 2.60× |\n",
			"|  | ADD / DEL p50 vs the mode's floor (exec + kernel) | 12.0 / 26.0 | 24.0 / 39.0 | 0.50× / 0.67× | 8.00 / 14.0 | 1.50× / 1.86× |\n",
		}},
		{name: "chained: no mode floor", write: &write, want: []string{
			"| s | ADD / DEL p50 vs one durable write | 12.0 / 26.0 | 24.0 / 39.0 | 0.50× / 0.67× | 1.00 / 1.00 | 12.00× / 26.00× |\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := comparison{name: "s", rail: fig(12, 26), upstream: fig(24, 39), floor: fig(6, 4), kernel: tt.kernel, write: tt.write}
			rows := floorRatioRows(c)
			if len(rows) != len(tt.want) {
				t.Fatalf("%d rows, want %d", len(rows), len(tt.want))
			}
			for i, r := range rows {
				name := ""
				if i == 0 {
					name = "s"
				}
				if got := r.format(name); got != tt.want[i] {
					t.Errorf("row %d:\n got %q\nwant %q", i, got, tt.want[i])
				}
			}
		})
	}
}
