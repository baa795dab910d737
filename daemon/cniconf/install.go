package cniconf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/containernetworking/cni/libcni"
)

// EntryState says how rail's entry stands in the runtime's file.
type EntryState int

// Entry states.
const (
	EntryMissing EntryState = iota // not there: to insert
	EntryStale                     // there, but not the configured entry (or twice)
	EntryCurrent                   // there, once, as configured
)

// Status describes the runtime's file as found.
type Status struct {
	// Target is the primary's file: the config the runtime would read
	// without rail (for a single-plugin file rail made a list from, that
	// file).
	Target string
	// File holds rail's entry: Target, or the list made from it
	// (NAME-rail.conflist, which the runtime reads first).
	File  string
	Entry EntryState
	// Uninstalled says raild install-cni --uninstall removed rail's entry
	// (its marker is in the conf dir).
	Uninstalled bool
}

// Result is what Install did.
type Result struct {
	Status
	Changed bool
}

// Installer edits one conf dir for one entry.
type Installer struct {
	dir   string
	entry []byte
	typ   string
	// supports reports whether the entry's plugin accepts a cniVersion.
	supports func(cniVersion string) error
}

// NewInstaller edits cfg.ConfDir with cfg.Entry; cfg must be Finish()ed.
// A rail entry goes only into configs whose cniVersion rail accepts.
func NewInstaller(cfg Config) *Installer {
	in := &Installer{dir: cfg.ConfDir, entry: cfg.Entry, typ: entryType(cfg.Entry), supports: anyVersion}
	if in.typ == "rail" {
		in.supports = railSupports
	}
	return in
}

// change is one planned edit of the runtime's file.
type change struct {
	status Status
	source []byte // Target's bytes as read
	before []byte // File's bytes as read (nil: a list to make, not there yet)
	after  []byte // File's new bytes
	backup []byte // the primary's bytes: Target without rail's entry
	perm   os.FileMode
	// hadBackup: Target's backup was there before this change.
	hadBackup bool
}

// Install puts rail's entry into the runtime's file, unless it is there
// already. guard, when set, is told how the file stands and may refuse any
// write (after an uninstall it is told so even when the file cannot be
// read). The conf dir is locked against other raild processes meanwhile;
// what rail left there that no longer belongs to a file is removed first
// (tidy).
func (in *Installer) Install(guard func(Status) error) (Result, error) {
	unlock, err := in.lock()
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	if err := in.tidy(); err != nil {
		return Result{}, err
	}
	ch, err := in.plan()
	if guard != nil && (err == nil || ch.status.Uninstalled) {
		if err := guard(ch.status); err != nil {
			return Result{Status: ch.status}, err
		}
	}
	if err != nil {
		return Result{Status: ch.status}, err
	}
	if ch.status.Entry == EntryCurrent {
		return Result{Status: ch.status}, nil
	}
	if err := ch.apply(); err != nil {
		return Result{Status: ch.status}, err
	}
	return Result{Status: ch.status, Changed: true}, nil
}

func (in *Installer) lock() (func(), error) {
	if _, err := os.Stat(in.dir); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", in.dir, ErrNoConfDir)
	}
	return lockDir(in.dir)
}

func (in *Installer) plan() (*change, error) {
	ch := &change{status: Status{Uninstalled: exists(filepath.Join(in.dir, uninstallMarker))}}
	path, err := runtimeFile(in.dir)
	if err != nil {
		return ch, err
	}
	ch.status.Target, ch.status.File = path, path
	if src := convertedSource(path); src != "" {
		// The list rail made, read first by the runtime: kept in step
		// with the file it is made from (tidy removed it if that is gone).
		ch.status.Target = src
		ch, err := in.planFile(ch)
		if err != nil {
			return ch, dropConverted(path, err)
		}
		return ch, nil
	}
	return in.planFile(ch)
}

// planFile reads Target and plans the edit.
func (in *Installer) planFile(ch *change) (*change, error) {
	path := ch.status.Target
	ch.hadBackup = exists(path + backupSuffix)
	ch.perm = fileMode(path, 0o644)
	var err error
	if ch.source, err = readConf(path); err != nil {
		return ch, err
	}
	if filepath.Ext(path) == ".conflist" {
		ch.before = ch.source
		err = in.planList(ch)
	} else {
		err = in.planConf(ch)
	}
	if err != nil {
		return ch, fmt.Errorf("%s: %w", path, err)
	}
	if ch.status.Entry != EntryCurrent {
		if _, err := libcni.ConfListFromBytes(ch.after); err != nil {
			return ch, fmt.Errorf("%s: the edited list would not load (%w); left as it was", path, err)
		}
	}
	return ch, nil
}

// dropConverted removes the list rail made from a single-plugin file that
// no longer gives one (its writer made it invalid, as Multus' entrypoint
// does when it stops, or changed it beyond what rail accepts): the runtime
// is to read that file as its writer left it, not rail's copy of its past.
func dropConverted(list string, why error) error {
	if err := removeFile(list); err != nil {
		return errors.Join(why, err)
	}
	if err := syncDir(filepath.Dir(list)); err != nil {
		return errors.Join(why, err)
	}
	return fmt.Errorf("%w; removed %s, made from it, so the runtime reads it as it is", why, list)
}

func (in *Installer) planList(ch *change) (err error) {
	list, err := libcni.ConfListFromBytes(ch.before)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnparsable, err)
	}
	if err := in.supports(list.CNIVersion); err != nil {
		return err
	}
	if ch.backup, err = in.withoutEntry(ch.before); err != nil {
		return err
	}
	doc, err := parseDocument(ch.before)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnparsable, err)
	}
	ours := in.ours(doc)
	switch {
	case len(ours) == 0:
		ch.status.Entry = EntryMissing
		ch.after, err = appendPlugin(doc, in.entry)
	case len(ours) == 1 && sameJSON(ch.before[doc.plugins[ours[0]].start:doc.plugins[ours[0]].end], in.entry):
		ch.status.Entry = EntryCurrent
	default:
		ch.status.Entry = EntryStale
		ch.after, err = in.refresh(ch.before)
	}
	return err
}

// planConf makes a list of a single-plugin file (NAME.conf or .json) with
// rail's entry, to be written as NAME-rail.conflist: the runtime reads that
// first, and NAME.conf stays as its writer wrote it, so that the writer's
// later edits are seen and its removal of the file (Multus thick, when it
// stops) takes the list away too.
func (in *Installer) planConf(ch *change) error {
	conf, err := libcni.ConfFromBytes(ch.source)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnparsable, err)
	}
	if conf.Network.Type == "" || conf.Network.Type == in.typ {
		return fmt.Errorf(`%w: want one plugin with a "type" that is not %q`, ErrUnparsable, in.typ)
	}
	if err := in.supports(conf.Network.CNIVersion); err != nil {
		return err
	}
	list, err := listFromConf(ch.source)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnparsable, err)
	}
	doc, err := parseDocument(list)
	if err != nil {
		return err
	}
	ch.status.File, ch.backup = convertedName(ch.status.Target), ch.source
	if ch.after, err = appendPlugin(doc, in.entry); err != nil {
		return err
	}
	ch.before, err = readConf(ch.status.File)
	switch {
	case errors.Is(err, os.ErrNotExist):
		ch.before, ch.status.Entry = nil, EntryMissing
	case err != nil:
		return err
	case bytes.Equal(ch.before, ch.after):
		ch.status.Entry = EntryCurrent
	default:
		ch.status.Entry = EntryMissing
		if primary, err := in.withoutEntry(ch.before); err == nil && bytes.Equal(primary, list) {
			ch.status.Entry = EntryStale
		}
	}
	return nil
}

// ours lists the indexes of plugins of rail's type.
func (in *Installer) ours(doc *document) []int {
	var idx []int
	for i, p := range doc.plugins {
		if p.typ == in.typ {
			idx = append(idx, i)
		}
	}
	return idx
}

// withoutEntry removes every plugin of rail's type, one at a time.
func (in *Installer) withoutEntry(data []byte) ([]byte, error) {
	for {
		doc, err := parseDocument(data)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnparsable, err)
		}
		ours := in.ours(doc)
		if len(ours) == 0 {
			return data, nil
		}
		data = removePlugin(doc, ours[len(ours)-1])
	}
}

// refresh keeps the first plugin of rail's type, in its place, with the
// configured entry, and drops the others.
func (in *Installer) refresh(data []byte) ([]byte, error) {
	for {
		doc, err := parseDocument(data)
		if err != nil {
			return nil, err
		}
		ours := in.ours(doc)
		if len(ours) == 1 {
			return replacePlugin(doc, ours[0], in.entry), nil
		}
		data = removePlugin(doc, ours[len(ours)-1])
	}
}

// apply writes the backup, then File, provided neither Target nor File
// changed since they were read; a backup written for this change is
// removed again when File cannot be written.
func (ch *change) apply() (retErr error) {
	backup := ch.status.Target + backupSuffix
	if err := WriteFile(backup, bytes.NewReader(ch.backup), 0o600); err != nil {
		return err
	}
	defer func() {
		if retErr != nil && !ch.hadBackup {
			_ = removeFile(backup)
		}
	}()
	return writeFile(ch.status.File, bytes.NewReader(ch.after), ch.perm, ch.unchanged)
}

// unchanged fails with ErrChanged when Target or File no longer holds
// what was read (or File, absent then, has appeared).
func (ch *change) unchanged() error {
	if err := checkUnchanged(ch.status.Target, ch.source); err != nil || ch.status.File == ch.status.Target {
		return err
	}
	if ch.before != nil {
		return checkUnchanged(ch.status.File, ch.before)
	}
	if exists(ch.status.File) {
		return fmt.Errorf("%s: %w", ch.status.File, ErrChanged)
	}
	return nil
}
