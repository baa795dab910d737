package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestCallsObserve: each call is counted under its result and timed once;
// a nil Calls observes nothing and does not panic.
func TestCallsObserve(t *testing.T) {
	tests := []struct {
		name string
		errs []error // one call each
		want Tally
	}{
		{name: "one ok call", errs: []error{nil}, want: Tally{OK: 1, Timed: 1}},
		{name: "one failed call", errs: []error{errors.New("boom")}, want: Tally{Failed: 1, Timed: 1}},
		{name: "mixed", errs: []error{nil, errors.New("boom"), nil}, want: Tally{OK: 2, Failed: 1, Timed: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			for _, err := range tt.errs {
				m.NRIHooks.Observe("CreateContainer", time.Now(), err)
			}
			if got := m.NRIHooks.Tally("CreateContainer"); got != tt.want {
				t.Errorf("Tally = %+v, want %+v", got, tt.want)
			}
			if got := m.NRIHooks.Tally("RunPodSandbox"); got != (Tally{}) {
				t.Errorf("another hook's Tally = %+v, want none", got)
			}
			if got := m.DevicePlugin.Tally("CreateContainer"); got != (Tally{}) {
				t.Errorf("the device plugin's Tally = %+v, want none", got)
			}
		})
	}
	var none *Calls
	none.Observe("CreateContainer", time.Now(), nil)
	if got := none.Tally("CreateContainer"); got != (Tally{}) {
		t.Errorf("nil Calls Tally = %+v", got)
	}
}

// TestCallsOnTheRegistry: both kinds are scraped under their names; a
// call name once used shows both results, the other at 0.
func TestCallsOnTheRegistry(t *testing.T) {
	m := New()
	m.NRIHooks.Observe("CreateContainer", time.Now(), nil)
	m.DevicePlugin.Observe("Allocate", time.Now(), errors.New("unknown device"))
	want := `
# HELP rail_deviceplugin_calls_total Device plugin calls from the kubelet (a ListAndWatch stream counts each list it sends), by call and result (ok, error).
# TYPE rail_deviceplugin_calls_total counter
rail_deviceplugin_calls_total{call="Allocate",result="error"} 1
rail_deviceplugin_calls_total{call="Allocate",result="ok"} 0
# HELP rail_nri_hooks_total NRI hooks the runtime called, by call and result (ok, error).
# TYPE rail_nri_hooks_total counter
rail_nri_hooks_total{call="CreateContainer",result="error"} 0
rail_nri_hooks_total{call="CreateContainer",result="ok"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "rail_nri_hooks_total", "rail_deviceplugin_calls_total"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rail_nri_hooks_duration_seconds", "rail_deviceplugin_calls_duration_seconds"} {
		if n, err := testutil.GatherAndCount(m.Registry, name); err != nil || n != 1 {
			t.Errorf("%s: %d series, %v; want 1", name, n, err)
		}
	}
}
