package podreport

import (
	"testing"
)

// BenchmarkAttached is what a report costs the ADD path: one queue send
// (the worker drains the queue meanwhile).
func BenchmarkAttached(b *testing.B) {
	m, err := newReportMetrics(nil)
	if err != nil {
		b.Fatal(err)
	}
	r := &Reporter{jobs: make(chan job, 256), metrics: m, log: Options{}.logger()}
	done := make(chan struct{})
	go func() {
		for range r.jobs {
		}
		close(done)
	}()
	a := twoRails()
	b.ReportAllocs()
	for b.Loop() {
		r.Attached(a)
	}
	close(r.jobs)
	<-done
}

// BenchmarkBuildReport is the worker's share per attachment: the Event
// messages and the network-status entries of two interfaces.
func BenchmarkBuildReport(b *testing.B) {
	a := twoRails()
	b.ReportAllocs()
	for b.Loop() {
		_ = attachedNotes(a)
		if _, err := attachedEntries(a); err != nil {
			b.Fatal(err)
		}
	}
}
