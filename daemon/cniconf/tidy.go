package cniconf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// exists says whether path names anything (a link counts, whatever it
// points to).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// convertedSource is the single-plugin file that rail made the list at
// path from, or "" when path is not such a list: its name is
// NAME-rail.conflist and the backup of NAME.conf (or .json) records it.
func convertedSource(path string) string {
	stem, ok := strings.CutSuffix(path, convertedSuffix)
	if !ok {
		return ""
	}
	for _, ext := range []string{".conf", ".json"} {
		if exists(stem + ext + backupSuffix) {
			return stem + ext
		}
	}
	return ""
}

// tidy removes what rail left in the conf dir that no longer belongs to a
// file there: a list made from a single-plugin file its writer removed
// (else the runtime would go on using a primary that stopped), and backups
// of files that are gone (the primary renamed its file). The caller holds
// the conf dir's lock.
func (in *Installer) tidy() error {
	entries, err := os.ReadDir(in.dir)
	if err != nil {
		return fmt.Errorf("read conf dir %s: %w", in.dir, err)
	}
	var gone, backups []string
	for _, e := range entries {
		path := filepath.Join(in.dir, e.Name())
		switch {
		case strings.HasSuffix(e.Name(), backupSuffix):
			backups = append(backups, path)
		case strings.HasSuffix(e.Name(), convertedSuffix):
			if src := convertedSource(path); src != "" && !exists(src) {
				gone = append(gone, path, src+backupSuffix)
			}
		}
	}
	for _, backup := range backups {
		if in.legacyReplaced(strings.TrimSuffix(backup, backupSuffix)) {
			gone = append(gone, legacyConvertedName(strings.TrimSuffix(backup, backupSuffix)))
		}
	}
	var errs []error
	for _, path := range gone {
		errs = append(errs, removeFile(path))
	}
	for _, backup := range backups {
		if !slices.Contains(gone, backup) && stale(strings.TrimSuffix(backup, backupSuffix)) {
			gone = append(gone, backup)
			errs = append(errs, removeFile(backup))
		}
	}
	if len(gone) > 0 {
		errs = append(errs, syncDir(in.dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tidy conf dir: %w", err)
	}
	return nil
}

// legacyReplaced says whether file is a single-plugin file that rail's
// earlier versions made NAME.conflist from (and removed), written again by
// its writer since: that list is then a copy of the past, which would be
// left as the runtime's file once the writer removes file again.
func (in *Installer) legacyReplaced(file string) bool {
	if ext := filepath.Ext(file); ext != ".conf" && ext != ".json" || !exists(file) {
		return false
	}
	list, err := readConf(legacyConvertedName(file))
	if err != nil {
		return false
	}
	backup, err := readConf(file + backupSuffix)
	if err != nil {
		return false
	}
	primary, err := in.withoutEntry(list)
	was, errConv := listFromConf(backup)
	return err == nil && errConv == nil && !bytes.Equal(primary, list) && bytes.Equal(primary, was)
}

// stale says whether a backup of file belongs to nothing in the conf dir:
// file is gone, and it is not a single-plugin file rail made a list from
// (that list is removed with it) or one that rail's earlier versions
// removed after making NAME.conflist of it (uninstall puts it back).
func stale(file string) bool {
	if !isConfName(filepath.Base(file)) || exists(file) {
		return false
	}
	if filepath.Ext(file) == ".conflist" {
		return true
	}
	return !exists(convertedName(file)) && !exists(legacyConvertedName(file))
}

// markUninstalled records that raild install-cni --uninstall removed
// rail's entry: a watcher still running sees the marker and stops
// instead of putting the entry back. The caller holds the lock.
func (in *Installer) markUninstalled() error {
	text := fmt.Sprintf("rail's entry was removed by raild install-cni --uninstall at %s; "+
		"a raild serve that starts afterwards removes this file and puts the entry back\n", time.Now().UTC().Format(time.RFC3339))
	return WriteFile(filepath.Join(in.dir, uninstallMarker), strings.NewReader(text), 0o644)
}

// removeTemps deletes the temp files of a raild or install-cni killed
// mid-write. The caller holds the lock: no write of rail's is under way.
func (in *Installer) removeTemps() error {
	return in.removeFiles(func(e os.DirEntry) bool { return e.Type().IsRegular() && isTempName(e.Name()) })
}

// removeBackups deletes every backup rail left in the conf dir.
func (in *Installer) removeBackups() error {
	return in.removeFiles(func(e os.DirEntry) bool {
		name, ok := strings.CutSuffix(e.Name(), backupSuffix)
		return ok && !e.IsDir() && isConfName(name)
	})
}

// removeFiles deletes the conf dir's entries that match.
func (in *Installer) removeFiles(match func(os.DirEntry) bool) error {
	entries, err := os.ReadDir(in.dir)
	if err != nil {
		return fmt.Errorf("read conf dir %s: %w", in.dir, err)
	}
	var errs []error
	for _, e := range entries {
		if match(e) {
			errs = append(errs, removeFile(filepath.Join(in.dir, e.Name())))
		}
	}
	return errors.Join(errs...)
}

// prepare is a watcher's start: it removes the temp files of an earlier
// raild killed mid-write, and the marker of an uninstall that happened
// before (a raild serve that starts installs). It says whether there was
// a marker.
func (in *Installer) prepare() (bool, error) {
	unlock, err := in.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	had := exists(filepath.Join(in.dir, uninstallMarker))
	return had, errors.Join(in.removeTemps(), removeFile(filepath.Join(in.dir, uninstallMarker)))
}

// forgetUninstall removes the uninstall marker once the watcher it was
// meant for stops (for it, or because raild stops): no one else reads it.
func (in *Installer) forgetUninstall() error {
	unlock, err := in.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return removeFile(filepath.Join(in.dir, uninstallMarker))
}
