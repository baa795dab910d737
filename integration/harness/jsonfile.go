package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// WriteJSON writes v as indented JSON into dir/name and returns the path.
func WriteJSON(t testing.TB, dir, name string, v any) string {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
