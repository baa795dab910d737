package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// List runs `go list -deps` on every package of the module in dir and
// returns the module's path and the packages it reports (the module's own
// and everything they depend on).
func List(dir string) (string, []Package, error) {
	module, err := goList(dir, "-m", "-f", "{{.Path}}")
	if err != nil {
		return "", nil, err
	}
	out, err := goList(dir, "-deps", "-json=ImportPath,Imports,Deps,TestImports,XTestImports", "./...")
	if err != nil {
		return "", nil, err
	}
	var pkgs []Package
	for dec := json.NewDecoder(strings.NewReader(out)); ; {
		var p Package
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, fmt.Errorf("importrules: read go list's answer: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return strings.TrimSpace(module), pkgs, nil
}

func goList(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("importrules: go list %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
