package raild

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// binaries are the programs under test, built once by TestMain.
type binaries struct {
	raild, railIPAM string
	hostLocal       string // upstream host-local; built only when benchmarks run
	dir             string // CNI_PATH for the plugins
}

// bins is set once by TestMain before any test runs, then only read.
var bins binaries

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "raild-it-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins, err = build(dir, flag.Lookup("test.bench").Value.String() != "")
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "build binaries under test:", err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles raild and rail-ipam from this repository into dir and,
// for benchmarks, upstream host-local at the version go.mod pins.
func build(dir string, withHostLocal bool) (binaries, error) {
	b := binaries{raild: filepath.Join(dir, "raild"), railIPAM: filepath.Join(dir, "rail-ipam"), dir: dir}
	gomod, err := goTool("", "env", "GOMOD")
	if err != nil {
		return b, err
	}
	repo := filepath.Dir(strings.TrimSpace(gomod))
	if _, err := goTool(repo, "build", "-o", b.raild, "./daemon"); err != nil {
		return b, err
	}
	if _, err := goTool(repo, "build", "-o", b.railIPAM, "./plugins/rail-ipam"); err != nil {
		return b, err
	}
	if !withHostLocal {
		return b, nil
	}
	out, err := goTool(repo, "mod", "download", "-json", "github.com/containernetworking/plugins")
	if err != nil {
		return b, err
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal([]byte(out), &mod); err != nil || mod.Dir == "" {
		return b, fmt.Errorf("locate the CNI plugins module: %v: %s", err, out)
	}
	// Built inside its own module, so its go.sum pins its dependencies.
	b.hostLocal = filepath.Join(dir, "host-local")
	_, err = goTool(mod.Dir, "build", "-trimpath", "-o", b.hostLocal, "./plugins/ipam/host-local")
	return b, err
}

// goTool runs the go command in dir with cgo off and returns its stdout.
func goTool(dir string, args ...string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = "/usr/local/go/bin/go"
	}
	cmd := exec.Command(gobin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-buildvcs=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", errors.Join(fmt.Errorf("go %s: %w", strings.Join(args, " "), err), errors.New(stderr.String()))
	}
	return stdout.String(), nil
}
