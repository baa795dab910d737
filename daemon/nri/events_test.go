package nri

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/railcni/rail/pkg/api"
)

func removeAll(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(dir + "/" + e.Name()); err != nil {
			return err
		}
	}
	return nil
}

// waitRelease waits for the fake state to see a release (not a timing
// assertion: the deadline only keeps a broken test from hanging).
func waitRelease(t *testing.T, st *fakeState) string {
	t.Helper()
	select {
	case id := <-st.notify:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("no ReleaseSandbox call")
		return ""
	}
}

func TestRemovePodSandboxReleases(t *testing.T) {
	tests := []struct {
		name    string
		leases  bool
		failing bool
		want    []string
	}{
		{"leases left behind are released", true, false, []string{"s1"}},
		{"nothing held, nothing to release", false, false, nil},
		{"a failing release is logged, not returned", true, true, []string{"s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newFakeState()
			if tt.leases {
				st.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0")
			}
			if tt.failing {
				st.err = errors.New("store closed")
			}
			p, logs := newTestPlugin(t, Config{StopGrace: "1h"}, t.TempDir(), st)
			if err := p.RemovePodSandbox(t.Context(), pod("s1", "default", nil)); err != nil {
				t.Fatalf("RemovePodSandbox: %v", err)
			}
			if got := st.releasedList(); !slices.Equal(got, tt.want) {
				t.Fatalf("released %v, want %v", got, tt.want)
			}
			if !tt.failing {
				return
			}
			recs := logs.records(t, "RemovePodSandbox failed")
			if len(recs) != 1 || !strings.Contains(fmt.Sprint(recs[0]["error"]), "store closed") || recs[0]["sandbox"] != "s1" {
				t.Fatalf("failure not logged with the sandbox and the error:\n%s", logs)
			}
		})
	}
}

// TestStopPodSandboxWaitsForDEL: containerd sends StopPodSandbox before the
// CNI DEL, so the release is only scheduled; RemovePodSandbox cancels it
// and releases at once; with a zero grace the scheduled release runs.
func TestStopPodSandboxWaitsForDEL(t *testing.T) {
	st := newFakeState()
	st.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0")
	p, _ := newTestPlugin(t, Config{StopGrace: "1h"}, t.TempDir(), st)
	sandbox := pod("s1", "default", nil)
	if err := p.StopPodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	if got := st.releasedList(); len(got) != 0 {
		t.Fatalf("StopPodSandbox released at once: %v", got)
	}
	if len(p.releases) != 1 {
		t.Fatalf("want one scheduled release, have %d", len(p.releases))
	}
	if err := p.RemovePodSandbox(t.Context(), sandbox); err != nil {
		t.Fatal(err)
	}
	if got := st.releasedList(); !slices.Equal(got, []string{"s1"}) || len(p.releases) != 0 {
		t.Fatalf("after remove: released %v, %d still scheduled", got, len(p.releases))
	}

	st2 := newFakeState()
	st2.add("s2", api.ModeMove, "10.56.0.6/24", "mlx5_1")
	p2, _ := newTestPlugin(t, Config{StopGrace: "0s"}, t.TempDir(), st2)
	if err := p2.StopPodSandbox(t.Context(), pod("s2", "default", nil)); err != nil {
		t.Fatal(err)
	}
	if id := waitRelease(t, st2); id != "s2" {
		t.Fatalf("released %q, want s2", id)
	}
}

func TestStopPodSandboxWithoutLeases(t *testing.T) {
	p, _ := newTestPlugin(t, Config{StopGrace: "0s"}, t.TempDir(), newFakeState())
	if err := p.StopPodSandbox(t.Context(), pod("s1", "default", nil)); err != nil {
		t.Fatal(err)
	}
	if len(p.releases) != 0 {
		t.Fatal("a release was scheduled for a pod holding nothing")
	}
}
