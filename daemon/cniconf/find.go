package cniconf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/containernetworking/cni/libcni"
)

// Conditions that are expected while a node comes up; callers retry them.
var (
	ErrNoConfDir  = errors.New("the CNI conf dir does not exist yet (the primary CNI has not started?)")
	ErrNoPrimary  = errors.New("no primary CNI config (*.conflist, *.conf, *.json) in the conf dir yet")
	ErrUnparsable = errors.New("the primary's CNI config does not parse")
)

// confExtensions are the names libcni-based runtimes (containerd, CRI-O) load.
var confExtensions = []string{".conf", ".conflist", ".json"}

// Names of rail's own files in the conf dir. No runtime loads them (their
// extensions are none of confExtensions), and Cilium's exclusive mode
// leaves them alone.
const (
	// backupSuffix names the copy of the primary's bytes kept next to its
	// file while rail's entry is in it. For a single-plugin file it is also
	// the record that the list named convertedName was made from it.
	backupSuffix = ".rail-bak"
	// convertedSuffix ends the name of the list made from a single-plugin
	// NAME.conf (or .json): NAME-rail.conflist sorts just before NAME.conf,
	// so the runtime reads it instead, while NAME.conf stays its writer's.
	convertedSuffix = "-rail.conflist"
	// tempInfix is in the name of WriteFile's temp files (.FILE.rail-tmp-N).
	tempInfix = ".rail-tmp-"
	// uninstallMarker records that raild install-cni --uninstall removed
	// rail's entry, so that a running watcher does not put it back.
	uninstallMarker = ".rail-uninstalled"
)

// confFiles lists the conf dir's CNI configs in the order the runtime tries
// them: libcni.ConfFiles, sorted by name as containerd and CRI-O do.
func confFiles(dir string) ([]string, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoConfDir)
	}
	files, err := libcni.ConfFiles(dir, confExtensions)
	if err != nil {
		return nil, fmt.Errorf("read conf dir %s: %w", dir, err)
	}
	sort.Strings(files)
	return files, nil
}

// runtimeFile is the file whose network the runtime gives every pod: the
// lexically first config in the conf dir.
func runtimeFile(dir string) (string, error) {
	files, err := confFiles(dir)
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("%s: %w", dir, ErrNoPrimary)
	}
	return files[0], nil
}

// convertedName is where a .conf or .json turned into a list is written.
func convertedName(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + convertedSuffix
}

// legacyConvertedName is where rail wrote that list before it kept the
// single-plugin file in place (and removed it instead); uninstall still
// recognizes it.
func legacyConvertedName(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".conflist"
}

// isTempName says whether name is one of WriteFile's temp files.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempInfix)
}

// isConfName says whether the runtime would load a file of this name.
func isConfName(name string) bool {
	ext := filepath.Ext(name)
	for _, e := range confExtensions {
		if ext == e {
			return true
		}
	}
	return false
}
