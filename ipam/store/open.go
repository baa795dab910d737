package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Open opens the lease file at path, creating it when neither it nor
// its side record exists, and checks it completely before anything is
// handed out: a missing, empty, truncated, damaged or rolled-back store is
// a *DamagedError, never a fresh start and never a panic.
func Open(path string, opt Options) (*Store, *Contents, error) {
	if opt.StuckAfter <= 0 {
		opt.StuckAfter = DefaultStuckAfter
	}
	st, c, err := open(path)
	var d *DamagedError
	if errors.As(err, &d) {
		d.Hint = opt.DamagedHint
	}
	if err != nil {
		return nil, nil, err
	}
	st.opt = opt
	st.start(c.txid, c.seq)
	return st, c, nil
}

func open(path string) (*Store, *Contents, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("ipam: create state dir for %s: %w", path, err)
	}
	side, sideExists, err := readSeq(seqPath(path))
	if err != nil {
		return nil, nil, err
	}
	if err := prepareFile(path, side, sideExists); err != nil {
		return nil, nil, err
	}
	if !sideExists { // prepareFile made one with a new store
		if side, sideExists, err = readSeq(seqPath(path)); err != nil {
			return nil, nil, err
		}
	}
	db, file, err := openBolt(path)
	if err != nil {
		return nil, nil, err
	}
	c, err := checkedContents(db, path, side, sideExists)
	if err != nil {
		return nil, nil, errors.Join(err, closeAfter(err, db, file))
	}
	seq, err := openSeqFile(seqPath(path), c.seq)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("ipam: %w", err), closeAfter(err, db, file))
	}
	return &Store{db: db, file: file, path: path, seq: seq}, c, nil
}

// prepareFile refuses a missing or empty file where a store existed, and
// creates a fresh one where none ever did.
func prepareFile(path string, side uint64, sideExists bool) error {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && sideExists && side > 0:
		return Damaged(path, "missing, but its side record %s says commit %d was made: the file was removed or lost", seqPath(path), side)
	case errors.Is(err, fs.ErrNotExist):
		return createStore(path, sideExists)
	case err != nil:
		return fmt.Errorf("ipam: %w", err)
	case info.Mode().Type() == fs.ModeSymlink:
		return fmt.Errorf("ipam: %s: a symbolic link: the lease store is never opened through a link; put the file itself there", path)
	case info.Size() == 0:
		return Damaged(path, "empty (0 bytes), but raild never leaves it empty: the leases it held are lost")
	}
	return nil
}

// createStore makes a new, empty store: the side record first (commit 0),
// then the file under a temporary name, renamed into place once complete,
// so a crash never leaves an empty or half-made leases.db.
func createStore(path string, sideExists bool) error {
	if !sideExists {
		if err := createSeq(seqPath(path), 0); err != nil {
			return fmt.Errorf("ipam: %w", err)
		}
	}
	tmp := path + ".new"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("ipam: remove leftover %s: %w", tmp, err)
	}
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: openTimeout, OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
		return openNoFollow(name, flag|os.O_EXCL, perm) // removed just above: a file there now was planted
	}})
	if err != nil {
		return fmt.Errorf("ipam: create %s: %w", tmp, err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return initFormat(tx, nil) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("ipam: create %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// openBolt opens the file with bbolt, turning its panics and memory faults
// on a damaged file into a *DamagedError. The file bbolt opened is closed
// again when it panicked half-way, so no lock or descriptor is left behind.
func openBolt(path string) (*bolt.DB, *os.File, error) {
	var file *os.File
	opts := &bolt.Options{Timeout: openTimeout, OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := openNoFollow(name, flag, perm)
		file = f
		return f, err
	}}
	if err := checkFreelistBeforeOpen(path); err != nil {
		return nil, nil, err
	}
	var db *bolt.DB
	err := guard(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, opts)
		return err
	})
	if err == nil {
		return db, file, nil
	}
	if file != nil {
		_ = file.Close() // already closed unless bbolt panicked
	}
	var pathErr *fs.PathError
	if problem, ok := truncation(path); ok {
		return nil, nil, Damaged(path, "%s", problem)
	}
	switch {
	case errors.Is(err, ErrDamaged):
		return nil, nil, err
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, nil, fmt.Errorf("ipam: open %s: locked by another process (is raild already running?): %w", path, err)
	case errors.As(err, &pathErr):
		return nil, nil, fmt.Errorf("ipam: open %s: %w", path, err)
	}
	return nil, nil, Damaged(path, "damaged: bbolt cannot open it: %s", oneLine(err.Error()))
}

// checkedContents checks the open file and reads it, converting a format 1
// file, and compares its commit sequence with the side record.
func checkedContents(db *bolt.DB, path string, side uint64, sideExists bool) (*Contents, error) {
	c, err := inspect(db, path, func(c *Contents) error { return checkSeq(c, path, side, sideExists) })
	if err != nil {
		return nil, err
	}
	if c.version != formatVersion {
		return upgrade(db, path)
	}
	return c, nil
}

// checkSeq refuses a store older than its side record.
func checkSeq(c *Contents, path string, side uint64, sideExists bool) error {
	switch {
	case c.version != formatVersion && sideExists:
		return Damaged(path, "rolled back: it is in format %q, older than its side record %s (commit %d): an older copy was put back", c.version, seqPath(path), side)
	case c.version != formatVersion:
		return nil // format 1, converted next
	case !sideExists:
		return Damaged(path, "its side record %s is missing, so lost commits cannot be ruled out", seqPath(path))
	case c.seq < side:
		return Damaged(path, "rolled back: it holds commit %d but commit %d was acknowledged (%s): an older copy was put back, or its last commit was damaged", c.seq, side, seqPath(path))
	}
	return nil
}

// upgrade converts a format 1 file (or a bbolt file without buckets) to
// the current format in one transaction, after making the side record.
func upgrade(db *bolt.DB, path string) (*Contents, error) {
	old, err := inspect(db, path, nil)
	if err != nil {
		return nil, err
	}
	if err := createSeq(seqPath(path), 0); err != nil {
		return nil, fmt.Errorf("ipam: %w", err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return initFormat(tx, old) }); err != nil {
		return nil, fmt.Errorf("ipam: convert %s to format %s: %w", path, formatVersion, err)
	}
	return inspect(db, path, nil)
}

// inspect checks the file and reads every record, with panics and memory
// faults turned into errors: the file covers the last commit, every record
// decodes with its checksum, verify (if any) accepts what was read, then
// bbolt's own consistency check.
func inspect(db *bolt.DB, path string, verify func(*Contents) error) (*Contents, error) {
	var c *Contents
	err := guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			if err := checkSize(tx, path); err != nil {
				return err
			}
			var err error
			if c, err = readContents(tx, path); err != nil {
				return err
			}
			if verify != nil {
				if err := verify(c); err != nil {
					return err
				}
			}
			if err := checkPageHeaders(tx, path); err != nil {
				return err
			}
			return checkTx(tx, path)
		})
	})
	return c, err
}

func checkSize(tx *bolt.Tx, path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("ipam: %w", err)
	}
	if info.Size() < tx.Size() {
		return Damaged(path, "truncated: %d bytes, its last commit needs %d", info.Size(), tx.Size())
	}
	return nil
}

// checkTx runs bbolt's consistency check (pages reachable once, freelist).
func checkTx(tx *bolt.Tx, path string) error {
	var problems []error
	for err := range tx.Check() {
		problems = append(problems, err)
	}
	if len(problems) == 0 {
		return nil
	}
	more := ""
	if len(problems) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(problems)-1)
	}
	return Damaged(path, "damaged: bbolt consistency check: %s%s", oneLine(problems[0].Error()), more)
}

// closeAfter closes a store that failed its checks. After a bbolt panic
// its locks may still be held and Close could wait forever: then only the
// file is closed (lock and descriptor released; the mapping stays).
func closeAfter(cause error, db *bolt.DB, file *os.File) error {
	var d *DamagedError
	if errors.As(cause, &d) && d.fault {
		_ = file.Close()
		return nil
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("ipam: close %s: %w", db.Path(), err)
	}
	return nil
}
