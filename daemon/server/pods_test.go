package server

import (
	"context"
	"testing"

	"github.com/railcni/rail/pkg/api"
)

func TestPodReportEndpoint(t *testing.T) {
	tests := []struct {
		name     string
		set      bool
		pod      [2]string
		wantCode uint // 0: a report
	}{
		{name: "checks off", pod: [2]string{"ml", "trainer"}, wantCode: api.CodeNotAvailable},
		{name: "a rail pod", set: true, pod: [2]string{"ml", "trainer"}},
		{name: "an unknown pod", set: true, pod: [2]string{"ml", "other"}, wantCode: api.CodeUnknownContainer},
		{name: "escaped names", set: true, pod: [2]string{"a b", "c%d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reports PodReports
			if tt.set {
				reports = func(ns, name string) (*api.PodReport, bool) {
					if name == "other" {
						return nil, false
					}
					return &api.PodReport{Namespace: ns, Name: name, Ready: true}, true
				}
			}
			f := startServerReporting(t, reports)
			r, err := f.client.PodReport(context.Background(), tt.pod[0], tt.pod[1])
			if tt.wantCode != 0 {
				if !api.IsCode(err, tt.wantCode) {
					t.Fatalf("err %v, want code %d", err, tt.wantCode)
				}
				return
			}
			if err != nil || r.Namespace != tt.pod[0] || r.Name != tt.pod[1] || !r.Ready {
				t.Fatalf("report %+v, %v", r, err)
			}
		})
	}
}
