package podcache

import (
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// health follows the informer's list and watch attempts: the last one
// decides. A stopped API server shows at the reflector's next watch
// attempt, which follows the end of the current watch at once.
type health struct {
	notify func()

	mu      sync.Mutex
	lastErr error
	errors  prometheus.Counter
}

func newHealth(notify func()) *health {
	return &health{notify: notify, errors: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rail_apiserver_watch_errors_total",
		Help: "Failed lists and watches of this node's pods (the API connection).",
	})}
}

// attempt records the outcome of one list or watch.
func (h *health) attempt(err error) {
	if err != nil {
		h.failed(err)
		return
	}
	h.mu.Lock()
	was := h.lastErr
	h.lastErr = nil
	h.mu.Unlock()
	if was != nil {
		h.notify()
	}
}

func (h *health) failed(err error) {
	h.errors.Inc()
	h.mu.Lock()
	h.lastErr = err
	h.mu.Unlock()
	h.notify()
}

// failing is the last list or watch error, nil after a success.
func (h *health) failing() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastErr
}

func (h *health) err(synced bool) error {
	if err := h.failing(); err != nil {
		return fmt.Errorf("API server: listing or watching this node's pods fails: %w", err)
	}
	if !synced {
		return errors.New("API server: the pod informer has not synced yet")
	}
	return nil
}

// register adds rail_apiserver_up (1: synced and the last list or watch
// succeeded) and the error counter.
func (h *health) register(r prometheus.Registerer, synced func() bool) error {
	up := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rail_apiserver_up",
		Help: "1 when raild's pod informer is synced and its last list or watch of the API server succeeded.",
	}, func() float64 {
		if h.err(synced()) != nil {
			return 0
		}
		return 1
	})
	return errors.Join(r.Register(up), r.Register(h.errors))
}

// broadcast wakes every waiter at once: wait returns a channel closed by
// the next notify.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func (b *broadcast) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

func (b *broadcast) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}
