package cniconf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Uninstall removes rail's entry from every list in the conf dir and the
// lists rail made from single-plugin files, deletes the backups and temp
// files, and leaves the uninstall marker for a watcher still running. A
// file not otherwise changed since the insertion gets back the primary's
// bytes exactly. It returns the files it changed; a conf dir that does not
// exist has nothing to uninstall.
func (in *Installer) Uninstall() ([]string, error) {
	unlock, err := in.lock()
	if errors.Is(err, ErrNoConfDir) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer unlock()
	files, err := confFiles(in.dir)
	if err != nil {
		return nil, err
	}
	var changed []string
	var errs []error
	for _, path := range files {
		did, err := in.uninstallFile(path)
		if did {
			changed = append(changed, path)
		}
		errs = append(errs, err)
	}
	errs = append(errs, in.removeBackups(), in.tidy(), in.removeTemps(), in.markUninstalled())
	return changed, errors.Join(errs...)
}

// uninstallFile takes rail's entry out of one list, or removes the list
// rail made from a single-plugin file. Files that rail refuses to read or
// that do not parse, or hold no entry of rail's, are left alone: rail did
// not write them so.
func (in *Installer) uninstallFile(path string) (bool, error) {
	if filepath.Ext(path) != ".conflist" {
		return false, nil
	}
	if convertedSource(path) != "" {
		if err := removeFile(path); err != nil {
			return false, err
		}
		return true, syncDir(filepath.Dir(path))
	}
	data, err := readConf(path)
	if refused(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	primary, err := in.withoutEntry(data)
	if err != nil || bytes.Equal(primary, data) {
		return false, nil
	}
	perm := fileMode(path, 0o644)
	if orig, backup := legacyConvertedFrom(path, primary); orig != "" {
		return true, restoreConf(path, orig, backup, perm)
	}
	if err := replaceIfUnchanged(path, data, primary, perm); err != nil {
		return false, fmt.Errorf("remove rail's entry: %w", err)
	}
	return true, nil
}

// legacyConvertedFrom finds the single-plugin file that rail's earlier
// versions made NAME.conflist from (and removed): its backup, turned into
// a list, gives exactly the list without rail's entry.
func legacyConvertedFrom(path string, primary []byte) (orig string, backup []byte) {
	stem := strings.TrimSuffix(path, ".conflist")
	for _, ext := range []string{".conf", ".json"} {
		data, err := readConf(stem + ext + backupSuffix)
		if err != nil {
			continue
		}
		if list, err := listFromConf(data); err == nil && bytes.Equal(list, primary) {
			return stem + ext, data
		}
	}
	return "", nil
}

// restoreConf puts the single-plugin file back (unless the primary has
// written a new one meanwhile) and removes the list made from it.
func restoreConf(list, orig string, backup []byte, perm os.FileMode) error {
	if !exists(orig) {
		if err := WriteFile(orig, bytes.NewReader(backup), perm); err != nil {
			return fmt.Errorf("restore %s: %w", orig, err)
		}
	}
	if err := removeFile(list); err != nil {
		return err
	}
	return syncDir(filepath.Dir(list))
}
