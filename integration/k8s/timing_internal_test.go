package k8s

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name        string
		in          []time.Duration
		median, p90 time.Duration
	}{
		{"empty", nil, 0, 0},
		{"one", ms(700), 700 * time.Millisecond, 700 * time.Millisecond},
		{"ten unsorted", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 5 * time.Millisecond, 9 * time.Millisecond},
		{"twenty", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 10 * time.Millisecond, 18 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(tc.in)
			if got.median != tc.median || got.p90 != tc.p90 {
				t.Errorf("summarize = %v / %v, want %v / %v", got.median, got.p90, tc.median, tc.p90)
			}
		})
	}
}
