package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/netnstest"
)

// TestQuickRun runs the whole bench in quick mode (what `make bench` runs,
// with few rounds and small bursts), so the bench cannot rot: every side
// must measure, the table must show every figure and nothing may leak.
func TestQuickRun(t *testing.T) {
	netnstest.RequireRoot(t, "creates network namespaces, veth, macvlan and ptp links")
	before := netnsNames(t)
	opt := quickSettings()
	opt.bin, opt.plugins = testBins.rail, testBins.plugins
	var out, log bytes.Buffer
	if err := run(context.Background(), opt, &out, &log); err != nil {
		t.Fatalf("quick run: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), log.String())
	}
	table := out.String()
	wants := []string{tableHeader, "Leaks: none", "**floors**", "kernel: into and back, p50 / p99",
		"kernel: macvlan created and deleted, p50 / p99", "| ADD / DEL p50 vs the mode's floor (exec + kernel + durable write) |",
		"| ADD / DEL p50 vs the kernel's own work for the mode |", "| ADD / DEL p50 vs one durable write |",
		"write: one durable 4 KiB write (pwrite + fdatasync) on raild's state dir's filesystem, p50 / p99",
		"| raild's CPU per ADD+DEL, sequential, less idle: rail's pod / a pod it does not serve |",
		"| **raild idle** | raild's CPU per s with nothing happening: all idle windows / the highest one |"}
	for _, sc := range []string{"rail move vs host-device + static", "rail macvlan vs macvlan + host-local",
		"ptp + rail macvlan chained vs ptp, then macvlan as a second network"} {
		wants = append(wants, "| "+sc+" | ADD, p50 / p99 |")
	}
	for _, want := range wants {
		if !strings.Contains(table, want) {
			t.Errorf("output lacks %q:\n%s", want, table)
		}
	}
	for _, line := range strings.Split(table, "\n") {
		if strings.Contains(line, "burst of") && strings.Count(line, "—") > 0 {
			t.Errorf("a burst figure is missing: %s", line)
		}
	}
	if left := newNames(before, netnsNames(t)); len(left) > 0 {
		t.Errorf("namespaces left behind: %v", left)
	}
}

// TestLeakCheckFindsLeaks leaves one kind of state behind on purpose and
// requires the leak check (and so a non-zero exit) to name it.
func TestLeakCheckFindsLeaks(t *testing.T) {
	netnstest.RequireRoot(t, "creates network namespaces, veth, macvlan and ptp links")
	ctx := context.Background()
	tests := []struct {
		name  string
		leave func(t *testing.T, b *bench) error
		want  []string // "" for none: the check must find nothing
	}{
		{name: "nothing left", leave: func(*testing.T, *bench) error { return nil }},
		{name: "a link in a pod", leave: func(_ *testing.T, b *bench) error { return addVeth(b.pods[1].Netns, "rbleak0") },
			want: []string{"pod p1: veth link rbleak0 left", "pod p1: veth link rbleak0p left"}},
		{name: "a link in the node", leave: func(_ *testing.T, b *bench) error { return addVeth(b.node.Netns, "rbleak1") },
			want: []string{"node netns changed: + link rbleak1"}},
		{name: "rail ADD without DEL", leave: func(_ *testing.T, b *bench) error { return b.sides.scenarios[1].rail.add(ctx, 0) },
			want: []string{"pod p0: macvlan link net1 left", "raild lease left: sandbox", "CNI cache entry left"}},
		{name: "macvlan ADD without DEL", leave: func(_ *testing.T, b *bench) error { return b.sides.scenarios[1].upstream.add(ctx, 1) },
			want: []string{"pod p1: macvlan link net1 left", "host-local reservation left", "CNI cache entry left"}},
		{name: "a connection to raild left open", leave: func(t *testing.T, b *bench) error {
			conn, err := net.Dial("unix", b.node.Raild.Socket)
			if err != nil {
				return err
			}
			t.Cleanup(func() { _ = conn.Close() })
			_, err = conn.Write([]byte("GET /pools HTTP/1.1\r\nHost: raild\r\n\r\n"))
			return err
		}, want: []string{"open socket"}},
		{name: "kernel floor link not moved back", leave: func(_ *testing.T, b *bench) error { return b.sides.kernel.move.add(ctx, 0) },
			want: []string{"kernel floor: rbkf0 is not back"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, base := newTestBench(t)
			if err := tt.leave(t, b); err != nil {
				t.Fatalf("leave state behind: %v", err)
			}
			leaks, err := leakCheck{node: b.node, pods: b.pods, kernel: b.sides.kernel, base: base}.run()
			if err != nil {
				t.Fatalf("leak check: %v", err)
			}
			found := strings.Join(leaks, "\n")
			if len(tt.want) == 0 && len(leaks) > 0 {
				t.Errorf("leaks found where none were left:\n%s", found)
			}
			for _, want := range tt.want {
				if !strings.Contains(found, want) {
					t.Errorf("leaks lack %q; found:\n%s", want, found)
				}
			}
		})
	}
}

// newTestBench is a bench with two pods on a fresh node, and its baseline.
func newTestBench(t *testing.T) (*bench, baseline) {
	t.Helper()
	bins, _, cleanup, err := prepareBins(options{bin: testBins.rail, plugins: testBins.plugins}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	node, err := newBenchNode(bins, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeAll(t, node.Close) })
	kernel, err := newKernelFloors(strings.TrimPrefix(node.ID, namePrefix+"-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeAll(t, kernel.close) })
	write, err := newWriteFloor(node.Dir, node.Raild.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeAll(t, write.close) })
	b, err := newBench(node, kernel, write, 2)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := harness.OpenFDs(node.Raild.PID())
	if err != nil {
		t.Fatal(err)
	}
	return b, baseline{node: b.before, raildFDs: harness.FDCounts(fds)}
}

func closeAll(t *testing.T, closers ...func() error) {
	t.Helper()
	var errs []error
	for _, c := range closers {
		errs = append(errs, c())
	}
	if err := errors.Join(errs...); err != nil {
		t.Errorf("clean up: %v", err)
	}
}

// addVeth makes a veth pair name, name+"p" in ns.
func addVeth(ns *harness.NetNS, name string) error {
	h, err := ns.Netlink()
	if err != nil {
		return err
	}
	defer h.Close()
	return h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: name + "p"})
}

func netnsNames(t *testing.T) []string {
	t.Helper()
	names, err := harness.NetnsWithPrefix(namePrefix)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func newNames(before, after []string) []string {
	seen := map[string]bool{}
	for _, n := range before {
		seen[n] = true
	}
	var out []string
	for _, n := range after {
		if !seen[n] {
			out = append(out, n)
		}
	}
	return out
}

// TestVerifyAttachments requires the check run before measuring to pass
// for pods that opt in, and to stop the bench when rail passes a pod
// through in chained mode (no GPUs, no opt-in): that rail would be
// measured doing nothing.
func TestVerifyAttachments(t *testing.T) {
	netnstest.RequireRoot(t, "creates network namespaces, veth, macvlan and ptp links")
	tests := []struct {
		name        string
		annotations map[string]string
		wantErr     string
	}{
		{name: "opted in", annotations: podAnnotations()},
		{name: "passed through", annotations: nil, wantErr: "has no rail0 after ADD (passed through?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newTestBench(t)
			b.pods[0].Annotations = tt.annotations
			err := verifyAttachments(context.Background(), []side{b.sides.scenarios[2].rail})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("verify: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("verify: error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
