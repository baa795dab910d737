package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// ImageFiles lists the HOST:IMAGE pairs of a container image made from the
// host's own files (the CRI rig's ociimage takes them with -file): every
// file of files and programs at its host path, and every library ldd
// resolves for the programs (ELF programs or libraries, dlopened plugins
// included when they are listed), the program interpreter included.
func ImageFiles(files, programs []string) ([]string, error) {
	paths := append(append([]string{}, files...), programs...)
	for _, p := range programs {
		libs, err := SharedLibraries(p)
		if err != nil {
			return nil, err
		}
		paths = append(paths, libs...)
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	pairs := make([]string, len(paths))
	for i, p := range paths {
		pairs[i] = p + ":" + p
	}
	return pairs, nil
}

// SharedLibraries returns the files ldd resolves for an ELF program or
// library, the program interpreter included.
func SharedLibraries(elf string) ([]string, error) {
	out, err := exec.Command("ldd", elf).Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w", elf, err)
	}
	var libs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			libs = append(libs, f[2])
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			libs = append(libs, f[0])
		}
	}
	return libs, nil
}
