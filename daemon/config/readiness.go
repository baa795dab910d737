package config

import (
	"fmt"
	"path/filepath"
	"time"
)

// DefaultReadinessInterval is how often every rail pod's RDMA path is
// checked again beside the events that wake the checks.
const DefaultReadinessInterval = 5 * time.Second

// Readiness configures the rail.dev/RDMAReady checks.
type Readiness struct {
	// Enabled turns the checks, the pod condition and doctor --pod's
	// checks on (default true).
	Enabled *bool `json:"enabled,omitempty"`
	// Interval is how often every rail pod is checked again (default 5s).
	Interval string `json:"interval,omitempty"`
	// ProcRoot is the procfs the containers' processes are read from
	// (default /proc; --proc-root), apart from --root's sysfs so a node
	// with a fake sysfs still reads its real containers.
	ProcRoot string `json:"procRoot,omitempty"`

	IntervalDuration time.Duration `json:"-"`
}

// On reports whether the checks run.
func (r Readiness) On() bool { return r.Enabled == nil || *r.Enabled }

func (r *Readiness) finish() error {
	if r.ProcRoot == "" {
		r.ProcRoot = "/proc"
	}
	if !filepath.IsAbs(r.ProcRoot) {
		return fmt.Errorf("readiness.procRoot %q: want an absolute path (the node's /proc)", r.ProcRoot)
	}
	r.IntervalDuration = DefaultReadinessInterval
	if r.Interval != "" {
		d, err := time.ParseDuration(r.Interval)
		if err != nil || d < 100*time.Millisecond {
			return fmt.Errorf("readiness.interval %q: want a duration of at least 100ms such as \"5s\"", r.Interval)
		}
		r.IntervalDuration = d
	}
	return nil
}
