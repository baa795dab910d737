package config

import (
	"strings"
	"testing"
	"time"
)

func TestReadinessSettings(t *testing.T) {
	off := false
	tests := []struct {
		name     string
		in       Readiness
		on       bool
		proc     string
		interval time.Duration
		err      string
	}{
		{name: "defaults", on: true, proc: "/proc", interval: DefaultReadinessInterval},
		{name: "set", in: Readiness{Enabled: &off, Interval: "2s", ProcRoot: "/host-proc"}, proc: "/host-proc", interval: 2 * time.Second},
		{name: "relative proc", in: Readiness{ProcRoot: "proc"}, err: "readiness.procRoot"},
		{name: "bad interval", in: Readiness{Interval: "soon"}, err: "readiness.interval"},
		{name: "too short", in: Readiness{Interval: "1ms"}, err: "at least 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.in
			err := r.finish()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || r.On() != tt.on || r.ProcRoot != tt.proc || r.IntervalDuration != tt.interval {
				t.Fatalf("%+v (on %v), %v", r, r.On(), err)
			}
		})
	}
}
