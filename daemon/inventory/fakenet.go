package inventory

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// fakeNetWatch follows a fake machine's /sys/class/net (raild --root):
// there the kernel filter passes a new link only when named (daemon/linkfilter),
// and a netdev the fake tree gains while raild runs (a VF made by writing
// sriov_numvfs, as the harness models it) is named from then on. On a
// real node the kernel names parent devices and this watch is not made.
type fakeNetWatch struct {
	fsw     *fsnotify.Watcher
	changed chan struct{} // one pending notice at most
}

// watchFakeNet watches root's /sys/class/net until ctx ends.
func watchFakeNet(ctx context.Context, root string) (*fakeNetWatch, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch the fake machine's netdevs: %w", err)
	}
	dir := filepath.Join(root, "sys", "class", "net")
	if err := fsw.Add(dir); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	w := &fakeNetWatch{fsw: fsw, changed: make(chan struct{}, 1)}
	go w.run(ctx)
	return w, nil
}

func (w *fakeNetWatch) run(ctx context.Context) {
	defer w.fsw.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				select {
				case w.changed <- struct{}{}:
				default:
				}
			}
		case _, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
		}
	}
}

// notices is closed never; nil (never ready) without a watch.
func (w *fakeNetWatch) notices() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.changed
}
