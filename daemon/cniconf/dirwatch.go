package cniconf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// dirWatch is the fsnotify watch of the conf dir, or of its parent while
// the conf dir does not exist yet (so its creation is seen at once).
type dirWatch struct {
	fsw   *fsnotify.Watcher
	onDir bool // watching the conf dir itself
}

// watch watches dir; when dir does not exist it watches its parent and
// says so with ErrNoConfDir.
func (dw *dirWatch) watch(dir string) error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch conf dir: %w", err)
	}
	dw.fsw = fsw
	if err := fsw.Add(dir); err == nil {
		dw.onDir = true
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		dw.close()
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	if err := fsw.Add(filepath.Dir(dir)); err != nil {
		dw.close()
	}
	return fmt.Errorf("%s: %w", dir, ErrNoConfDir)
}

// relevant says whether an event calls for a pass: a change of a file the
// runtime would load, of the uninstall marker, or of the conf dir itself. The conf dir going away
// (or a closed watch) drops the watch; the pass sets it up again.
func (dw *dirWatch) relevant(ev fsnotify.Event, ok bool, dir string) bool {
	if !ok || ev.Name == dir {
		dw.close()
		return true
	}
	name := filepath.Base(ev.Name)
	return dw.onDir && (isConfName(name) || name == uninstallMarker)
}

func (dw *dirWatch) close() {
	if dw.fsw != nil {
		dw.fsw.Close()
	}
	dw.fsw, dw.onDir = nil, false
}

// events and errors are nil channels (never ready) without a watch.
func (dw *dirWatch) events() chan fsnotify.Event {
	if dw.fsw == nil {
		return nil
	}
	return dw.fsw.Events
}

func (dw *dirWatch) errors() chan error {
	if dw.fsw == nil {
		return nil
	}
	return dw.fsw.Errors
}

// isMarker says whether ev is the uninstall marker's arrival.
func isMarker(ev fsnotify.Event) bool {
	return filepath.Base(ev.Name) == uninstallMarker && ev.Has(fsnotify.Create)
}
