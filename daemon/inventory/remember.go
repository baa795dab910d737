package inventory

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/railcni/rail/pkg/topology"
)

// heldNIC is the last host record of a NIC a pod holds, as saved across a
// raild restart (Path is left out of the NIC's own JSON).
type heldNIC struct {
	NIC  topology.NIC `json:"nic"`
	Path []string     `json:"path,omitempty"`
}

// SaveHeld writes the current snapshot's records of the NICs pods hold to
// path (replaced atomically), so a raild that starts while they sit in
// pods still knows their host names, places and char devices.
func (inv *Inventory) SaveHeld(path string) error {
	snap := inv.Current()
	holders := inv.currentHolders()
	records := make([]heldNIC, 0, len(holders))
	for name := range holders {
		if nic, ok := snap.Machine.NICByName(name); ok {
			records = append(records, heldNIC{NIC: nic, Path: nic.Path})
		}
	}
	sort.Slice(records, func(i, j int) bool { return records[i].NIC.Name < records[j].NIC.Name })
	data, err := json.Marshal(records)
	if err != nil {
		return fmt.Errorf("held NICs: %w", err)
	}
	return writeAtomic(path, data)
}

// Restore reads what SaveHeld wrote: NICs missing from the host, or shown
// without their netdev, are taken from it while a lease holds them. A
// missing file is no record (the first start).
func (inv *Inventory) Restore(path string) error {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("held NICs: %w", err)
	}
	var records []heldNIC
	if err := json.Unmarshal(data, &records); err != nil {
		return fmt.Errorf("held NICs %s: %w (remove the file: it is only a memory of NICs in pods)", path, err)
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

func (inv *Inventory) currentHolders() map[string]string {
	inv.rescanMu.Lock()
	defer inv.rescanMu.Unlock()
	return inv.holders()
}

// writeAtomic writes data to a temporary file beside path and renames it.
func writeAtomic(path string, data []byte) (retErr error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("held NICs: %w", err)
	}
	defer func() {
		if retErr != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("held NICs: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("held NICs: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("held NICs: %w", err)
	}
	return nil
}
