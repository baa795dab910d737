//go:build !unix

package topology

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// maxAttrSize bounds one read, as on unix.
const maxAttrSize = 64 << 10

// readFile reads a small regular file; anything else is refused.
func readFile(path string) ([]byte, error) { return readFileMax(path, maxAttrSize) }

// readFileMax is readFile for a file of at most max bytes.
func readFileMax(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("is not a regular file")}
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err == nil && len(data) > max {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", max)}
	}
	return data, err
}
