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
	// Target is the primary's file: the one the runtime reads first.
	Target string
	// File holds rail's entry: Target, or Target turned into a .conflist.
	File  string
	Entry EntryState
	// Recorded says Target's backup exists: rail was put into it and has
	// not been uninstalled since.
	Recorded bool
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
	before []byte // Target's bytes as read
	after  []byte // File's new bytes
	backup []byte // the primary's bytes: Target without rail's entry
	perm   os.FileMode
}

// Install puts rail's entry into the runtime's file, unless it is there
// already. guard, when set, is asked before any write and may refuse it.
// The conf dir is locked against other raild processes meanwhile.
func (in *Installer) Install(guard func(Status) error) (Result, error) {
	unlock, err := in.lock()
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	ch, err := in.plan()
	if err != nil || ch.status.Entry == EntryCurrent {
		return Result{Status: ch.status}, err
	}
	if guard != nil {
		if err := guard(ch.status); err != nil {
			return Result{Status: ch.status}, err
		}
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
	path, err := runtimeFile(in.dir)
	if err != nil {
		return &change{}, err
	}
	ch := &change{status: Status{Target: path, File: path}, perm: fileMode(path, 0o644)}
	if ch.before, err = os.ReadFile(path); err != nil {
		return ch, fmt.Errorf("read %s: %w", path, err)
	}
	_, err = os.Stat(path + backupSuffix)
	ch.status.Recorded = err == nil
	if filepath.Ext(path) == ".conflist" {
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

// planConf turns a single-plugin file into a list next to it, with rail's
// entry; the single-plugin file is then removed (its bytes stay in the backup).
func (in *Installer) planConf(ch *change) error {
	conf, err := libcni.NetworkPluginConfFromBytes(ch.before)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnparsable, err)
	}
	if conf.Network.Type == "" || conf.Network.Type == in.typ {
		return fmt.Errorf(`%w: want one plugin with a "type" that is not %q`, ErrUnparsable, in.typ)
	}
	if err := in.supports(conf.Network.CNIVersion); err != nil {
		return err
	}
	list, err := listFromConf(ch.before)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnparsable, err)
	}
	doc, err := parseDocument(list)
	if err != nil {
		return err
	}
	ch.status.File, ch.status.Entry, ch.backup = listName(ch.status.Target), EntryMissing, ch.before
	if _, err := os.Stat(ch.status.File); err == nil && !ch.status.Recorded {
		return fmt.Errorf("cannot turn it into a list: %s exists and rail did not write it; remove one of the two", ch.status.File)
	}
	ch.after, err = appendPlugin(doc, in.entry)
	return err
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

// apply writes the backup, then File; a backup written for this change is
// removed again when File cannot be written.
func (ch *change) apply() (retErr error) {
	backup := ch.status.Target + backupSuffix
	if err := WriteFile(backup, bytes.NewReader(ch.backup), 0o600); err != nil {
		return err
	}
	defer func() {
		if retErr != nil && !ch.status.Recorded {
			_ = removeFile(backup)
		}
	}()
	if ch.status.File == ch.status.Target {
		return replaceIfUnchanged(ch.status.File, ch.before, ch.after, ch.perm)
	}
	return ch.applyConversion()
}

// applyConversion writes the new list, then removes the single-plugin file;
// the runtime reads the old file until the new list is complete.
func (ch *change) applyConversion() (retErr error) {
	check := func() error { return checkUnchanged(ch.status.Target, ch.before) }
	if err := writeFile(ch.status.File, bytes.NewReader(ch.after), ch.perm, check); err != nil {
		return err
	}
	defer func() {
		if retErr != nil {
			_ = removeFile(ch.status.File)
		}
	}()
	if err := removeFile(ch.status.Target); err != nil {
		return err
	}
	return syncDir(filepath.Dir(ch.status.Target))
}
