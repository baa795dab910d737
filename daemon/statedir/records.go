package statedir

import "path/filepath"

// RecordsFile keeps the NICs' host records across restarts, for the NICs
// that sit in pods when raild starts.
func RecordsFile(stateDir string) string { return filepath.Join(stateDir, "inventory.json") }
