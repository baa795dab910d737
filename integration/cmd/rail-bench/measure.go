package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// sample is one measured ADD and DEL and the CPU their plugin processes
// used.
type sample struct {
	add, del time.Duration
	cpu      time.Duration
}

// record is what one side measured.
type record struct {
	seq    []sample         // sequential ADD+DEL, one per round
	bursts map[int][]sample // per burst size: wall time of all ADDs, of all DELs, and the CPU of the burst
	raild  raildFigures     // raild's CPU in the side's windows (raildWindows)
}

// measurer runs sides in alternation and records what each measured.
type measurer struct {
	sides   []side
	records map[side]*record
}

func newMeasurer(sides []side) *measurer {
	m := &measurer{sides: sides, records: map[side]*record{}}
	for _, s := range sides {
		m.records[s] = &record{bursts: map[int][]sample{}}
	}
	return m
}

// rotation is the sides in round i's order: every side takes every place
// in turn (ABC, BCA, CAB, ...), so neither drift nor order favours one.
func (m *measurer) rotation(i int) []side {
	out := make([]side, 0, len(m.sides))
	for k := range m.sides {
		out = append(out, m.sides[(i+k)%len(m.sides)])
	}
	return out
}

// rounds runs n rounds of one ADD+DEL per side; keep records them (warm-up
// rounds are not kept).
func (m *measurer) rounds(ctx context.Context, n int, keep bool) error {
	for i := 0; i < n; i++ {
		for _, s := range m.rotation(i) {
			if err := ctx.Err(); err != nil {
				return err
			}
			got, err := m.cycle(ctx, s)
			if err != nil {
				return err
			}
			if err := s.tidy(1); err != nil {
				return err
			}
			if keep {
				m.records[s].seq = append(m.records[s].seq, got)
			}
		}
	}
	return nil
}

// cycle times one ADD then one DEL of slot 0.
func (m *measurer) cycle(ctx context.Context, s side) (sample, error) {
	return m.measure(func() (time.Duration, error) {
		start := time.Now()
		err := s.add(ctx, 0)
		return time.Since(start), err
	}, func() (time.Duration, error) {
		start := time.Now()
		err := s.del(ctx, 0)
		return time.Since(start), err
	})
}

// bursts runs reps bursts of each size on every side that holds that many
// pods, alternating the sides as rounds does.
func (m *measurer) bursts(ctx context.Context, sizes []int, reps int) error {
	turn := 0
	for rep := 0; rep < reps; rep++ {
		for _, size := range sizes {
			for _, s := range m.rotation(turn) {
				if s.capacity() < size {
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				got, err := m.burst(ctx, s, size)
				if err != nil {
					return fmt.Errorf("burst of %d: %w", size, err)
				}
				if err := s.tidy(size); err != nil {
					return err
				}
				m.records[s].bursts[size] = append(m.records[s].bursts[size], got)
			}
			turn++
		}
	}
	return nil
}

// burst adds size pods at once and waits for all, then deletes them at
// once: the wall time of each phase and the CPU of both.
func (m *measurer) burst(ctx context.Context, s side, size int) (sample, error) {
	return m.measure(func() (time.Duration, error) {
		start := time.Now()
		err := parallel(size, func(slot int) error { return s.add(ctx, slot) })
		return time.Since(start), err
	}, func() (time.Duration, error) {
		start := time.Now()
		err := parallel(size, func(slot int) error { return s.del(ctx, slot) })
		return time.Since(start), err
	})
}

// measure runs add then del (del even when add failed, so a failed ADD
// leaves nothing) with the plugins' CPU read around both.
func (m *measurer) measure(add, del func() (time.Duration, error)) (sample, error) {
	before, err := pluginCPU()
	if err != nil {
		return sample{}, err
	}
	addTime, addErr := add()
	delTime, delErr := del()
	if err := errors.Join(addErr, delErr); err != nil {
		return sample{}, err
	}
	after, err := pluginCPU()
	if err != nil {
		return sample{}, err
	}
	return sample{add: addTime, del: delTime, cpu: after - before}, nil
}

// parallel runs fn for slots 0..n-1 at once and joins their errors.
func parallel(n int, fn func(slot int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for slot := range n {
		wg.Go(func() { errs[slot] = fn(slot) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
