package inventory

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/railcni/rail/pkg/topology"
)

// hostRecord is the last host record of a NIC, as saved across a raild
// restart (Path is left out of the NIC's own JSON).
type hostRecord struct {
	NIC  topology.NIC `json:"nic"`
	Path []string     `json:"path,omitempty"`
}

// SaveRecords writes the current snapshot's record of every NIC known with
// its netdev to path (replaced atomically), so a raild that starts while
// some sit in pods still knows their host names, places and char devices.
// Every NIC, not only the held ones: a NIC leased and moved into a pod
// before the next rescan (raild killed right after the ADD) must have a
// record already.
func (inv *Inventory) SaveRecords(path string) error {
	snap := inv.Current()
	records := make([]hostRecord, 0, len(snap.Machine.NICs))
	for _, nic := range snap.Machine.NICs {
		if nic.Netdev != "" {
			records = append(records, hostRecord{NIC: nic, Path: nic.Path})
		}
	}
	sort.Slice(records, func(i, j int) bool { return records[i].NIC.Name < records[j].NIC.Name })
	data, err := json.Marshal(records)
	if err != nil {
		return fmt.Errorf("NIC records: %w", err)
	}
	return writeAtomic(path, data)
}

// Restore reads what SaveRecords wrote: NICs missing from the host, or
// shown without their netdev, are taken from it while a lease holds them.
// A missing file is no record (the first start).
func (inv *Inventory) Restore(path string) error {
	data, err := readNoFollow(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("NIC records: %w", err)
	}
	var records []hostRecord
	if err := json.Unmarshal(data, &records); err != nil {
		return fmt.Errorf("NIC records %s: %w (remove the file: it is only a memory of NICs in pods)", path, err)
	}
	remembered := make(map[string]topology.NIC, len(records))
	for _, r := range records {
		r.NIC.Path = r.Path
		remembered[r.NIC.Name] = r.NIC
	}
	inv.rescanMu.Lock()
	defer inv.rescanMu.Unlock()
	inv.remembered = remembered
	return nil
}

// readNoFollow reads path, never through a symbolic link: the records sit
// in root's state dir, and a link there must not feed raild another file.
func readNoFollow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// writeAtomic writes data to a temporary file beside path and renames it.
func writeAtomic(path string, data []byte) (retErr error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("NIC records: %w", err)
	}
	defer func() {
		if retErr != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("NIC records: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("NIC records: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("NIC records: %w", err)
	}
	return nil
}
