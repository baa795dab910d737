package main

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"
)

func TestTickZonesWait(t *testing.T) {
	tick := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	zones := tickZones{tick: tick, period: 30 * time.Second, before: time.Second, after: 2 * time.Second}
	at := func(d time.Duration) time.Time { return tick.Add(d) }
	tests := []struct {
		name   string
		zones  tickZones
		now    time.Time
		length time.Duration
		want   time.Duration
	}{
		{name: "fits before the next zone", zones: zones, now: at(5 * time.Second), length: 20 * time.Second, want: 0},
		{name: "ends right where the zone begins", zones: zones, now: at(5 * time.Second), length: 24 * time.Second, want: 0},
		{name: "would hold the next tick", zones: zones, now: at(5 * time.Second), length: 25 * time.Second, want: 27 * time.Second},
		{name: "inside a zone", zones: zones, now: at(30*time.Second + 500*time.Millisecond), length: time.Second, want: 1500 * time.Millisecond},
		{name: "many periods later", zones: zones, now: at(10*30*time.Second - 2*time.Second), length: 5 * time.Second, want: 4 * time.Second},
		{name: "before the tick seen", zones: zones, now: at(-10 * time.Second), length: 5 * time.Second, want: 0},
		{name: "longer than a gap: at once", zones: zones, now: at(5 * time.Second), length: 28 * time.Second, want: 0},
		{name: "no tick seen", zones: tickZones{period: 30 * time.Second}, now: at(29 * time.Second), length: 5 * time.Second, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.zones.wait(tt.now, tt.length); got != tt.want {
				t.Errorf("wait %s, want %s", got, tt.want)
			}
		})
	}
}

func TestBurstStart(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	// series builds samples 10 ms apart from CPU increments in ms.
	series := func(steps ...float64) []tickSample {
		out := []tickSample{{at: base}}
		var cpu time.Duration
		for i, s := range steps {
			cpu += time.Duration(s * float64(ms))
			out = append(out, tickSample{at: base.Add(time.Duration(i+1) * 10 * ms), cpu: cpu})
		}
		return out
	}
	tests := []struct {
		name    string
		samples []tickSample
		want    time.Time // zero: none
	}{
		{name: "one burst among crumbs", samples: series(0.01, 0.01, 0.01, 4, 8, 8, 0.01, 0.01, 3, 0.01, 0.01),
			want: base.Add(30 * ms)},
		{name: "the larger of two", samples: series(6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 9, 0),
			want: base.Add(300 * ms)},
		{name: "nothing reaches the least cost", samples: series(1, 1, 1, 0, 0), want: time.Time{}},
		{name: "no samples", samples: nil, want: time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := burstStart(tt.samples, 100*ms, 5*ms); !got.Equal(tt.want) {
				t.Errorf("burst began at %s, want %s", got, tt.want)
			}
		})
	}
}

// TestFindTick watches this process while a thread of it burns 30 ms at
// a known time, as raild's rescan timer does: the tick found must be then.
func TestFindTick(t *testing.T) {
	burnAt := time.Now().Add(400 * time.Millisecond)
	go func() {
		time.Sleep(time.Until(burnAt))
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		spin(t, 30*time.Millisecond)
	}()
	tick, err := findTick(context.Background(), os.Getpid(), time.Second, 250*time.Millisecond, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if d := tick.Sub(burnAt); d < -50*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("tick found at %s, %s from the burn's start, want within -50 ms..+100 ms", tick.Format(time.StampMilli), d)
	}
}
