//go:build !unix

package topology

import (
	"errors"
	"io"
	"os"
)

// maxAttrSize bounds one read, as on unix.
const maxAttrSize = 64 << 10

// readFile reads a small regular file; anything else is refused.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("is not a regular file")}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxAttrSize+1))
	if err == nil && len(data) > maxAttrSize {
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("file too large for a sysfs attribute")}
	}
	return data, err
}
