package main

import (
	"context"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// burner is a side whose pods cost this process CPU: each ADD burns
// addCost, and each DEL sets off followUp of work delay later, as raild's
// follow-up read trails a burst of link events.
type burner struct {
	addCost, followUp, delay time.Duration
	pending                  sync.WaitGroup
	t                        *testing.T
}

func (b *burner) add(context.Context, int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	spin(b.t, b.addCost)
	return nil
}

func (b *burner) del(context.Context, int) error {
	b.pending.Add(1)
	time.AfterFunc(b.delay, func() {
		defer b.pending.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		spin(b.t, b.followUp)
	})
	return nil
}

func (b *burner) capacity() int  { return 4 }
func (b *burner) tidy(int) error { return nil }

// TestRaildWindowsCountWhatPodsSetOff measures this process as raild's
// stand-in: a window must hold the work its pods set off after their last
// DEL (here 150 ms later, within the settle), and its idle twin none of it,
// so that per pod comes out at what a pod costs.
func TestRaildWindowsCountWhatPodsSetOff(t *testing.T) {
	s := &burner{addCost: 4 * time.Millisecond, followUp: 4 * time.Millisecond, delay: 150 * time.Millisecond, t: t}
	m := newMeasurer([]side{s})
	timing := windowTiming{settle: 400 * time.Millisecond, period: time.Second}
	start := time.Now()
	if err := m.raildWindows(context.Background(), os.Getpid(), []side{s}, 3, 4, timing, io.Discard); err != nil {
		t.Fatal(err)
	}
	s.pending.Wait()
	if took := time.Since(start); took < timing.period {
		t.Errorf("windows and twins took %s, want the twins at least one period (%s) after their windows", took, timing.period)
	}
	perPod := s.addCost + s.followUp
	got := m.records[s].raild
	for _, tt := range []struct {
		name string
		w    raildWindow
		pods int
	}{{name: "sequential", w: got.seq, pods: 3}, {name: "burst", w: got.burst, pods: 4}} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.w.pods != tt.pods {
				t.Errorf("%d pods in the window, want %d", tt.w.pods, tt.pods)
			}
			if tt.w.wall < timing.settle {
				t.Errorf("window of %s, want it open at least the settle (%s)", tt.w.wall, timing.settle)
			}
			if tt.w.idle >= perPod {
				t.Errorf("idle twin used %s, want less than one pod's %s: a pod's work landed in it", tt.w.idle, perPod)
			}
			// Each pod burned exactly perPod on its threads; the rest of
			// this process (the runtime, timers) adds a little.
			if p := tt.w.perPod(); p < perPod*9/10 || p > 3*perPod {
				t.Errorf("per pod %s (window %s, idle %s), want about %s", p, tt.w.busy, tt.w.idle, perPod)
			}
		})
	}
}

func TestRaildWindowFigures(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name              string
		windows           []raildWindow
		wantPerPod        []time.Duration
		wantMean, wantMax time.Duration
	}{
		{name: "idle taken out", windows: []raildWindow{{pods: 100, wall: 10 * time.Second, busy: 60 * ms, idle: 10 * ms}},
			wantPerPod: []time.Duration{500 * time.Microsecond}, wantMean: ms, wantMax: ms},
		{name: "nothing beyond idle can come out below zero",
			windows:    []raildWindow{{pods: 10, wall: 2 * time.Second, busy: 4 * ms, idle: 6 * ms}, {pods: 5, wall: 8 * time.Second, busy: 9 * ms, idle: 4 * ms}},
			wantPerPod: []time.Duration{-200 * time.Microsecond, ms}, wantMean: ms, wantMax: 3 * ms},
		{name: "no window", windows: []raildWindow{{}}, wantPerPod: []time.Duration{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, w := range tt.windows {
				if got := w.perPod(); got != tt.wantPerPod[i] {
					t.Errorf("window %d: per pod %s, want %s", i, got, tt.wantPerPod[i])
				}
			}
			if mean, highest := idleRate(tt.windows); mean != tt.wantMean || highest != tt.wantMax {
				t.Errorf("idle rate %s, highest %s; want %s, %s", mean, highest, tt.wantMean, tt.wantMax)
			}
		})
	}
}
