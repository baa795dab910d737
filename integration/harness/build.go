package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// UpstreamModule is the reference CNI plugins module, pinned in go.mod.
const UpstreamModule = "github.com/containernetworking/plugins"

// UpstreamPlugins are the reference plugins the tests and the demo use.
var UpstreamPlugins = []string{
	"plugins/main/ptp", "plugins/ipam/host-local", "plugins/main/loopback",
	"plugins/main/macvlan", "plugins/main/host-device", "plugins/ipam/static",
}

// RepoRoot is the directory of the main module (where go.mod is), found
// with `go env GOMOD` from the working directory.
func RepoRoot() (string, error) {
	out, err := goCommand("", "env", "GOMOD")
	if err != nil {
		return "", err
	}
	gomod := strings.TrimSpace(out)
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the rail module: run from the repository (go env GOMOD is empty)")
	}
	return filepath.Dir(gomod), nil
}

// BuildRail builds raild, rail and rail-ipam from the repository into dir.
func BuildRail(dir string) error {
	if err := BuildPackages(dir, "./daemon", "./plugins/rail", "./plugins/rail-ipam"); err != nil {
		return fmt.Errorf("build rail binaries: %w", err)
	}
	// go build names a package's binary after its directory: daemon -> raild.
	if err := os.Rename(filepath.Join(dir, "daemon"), filepath.Join(dir, "raild")); err != nil {
		return fmt.Errorf("name raild: %w", err)
	}
	return nil
}

// BuildPackages builds main packages of the repository (paths like
// "./plugins/rail") into dir, each binary named after its directory.
func BuildPackages(dir string, pkgs ...string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	_, err = goCommand(root, append([]string{"build", "-o", dir + "/"}, pkgs...)...)
	return err
}

// UpstreamPluginDir returns a directory holding the reference CNI plugins
// at the version go.mod pins, building them once from the module cache
// into cacheDir/cni-plugins-<version>-<go version> (shared by later runs,
// guarded by a lock file so parallel runs build once).
func UpstreamPluginDir(cacheDir string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	modDir, version, err := upstreamModule(root)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cacheDir, fmt.Sprintf("cni-plugins-%s-%s", version, runtime.Version()))
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("plugin cache %s: %w", cacheDir, err)
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if haveAll(dir) {
		return dir, nil
	}
	if err := buildUpstream(modDir, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// DefaultCacheDir is $RAIL_TEST_CACHE, else the user cache dir's rail-test.
func DefaultCacheDir() string {
	if dir := os.Getenv("RAIL_TEST_CACHE"); dir != "" {
		return dir
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "rail-test")
	}
	return filepath.Join(os.TempDir(), "rail-test-cache")
}

// upstreamModule finds the plugins module in the module cache (downloading
// it through the module proxy if needed) and its pinned version.
func upstreamModule(root string) (dir, version string, err error) {
	out, err := goCommand(root, "mod", "download", "-json", UpstreamModule)
	if err != nil {
		return "", "", fmt.Errorf("locate %s: %w", UpstreamModule, err)
	}
	var mod struct{ Dir, Version string }
	if err := json.Unmarshal([]byte(out), &mod); err != nil || mod.Dir == "" || mod.Version == "" {
		return "", "", fmt.Errorf("locate %s: go mod download gave no Dir/Version: %s", UpstreamModule, out)
	}
	return mod.Dir, mod.Version, nil
}

// buildUpstream builds inside the plugins module itself (its own go.mod and
// go.sum pin its dependencies), into a temporary directory renamed into
// place, so a half-built cache is never seen.
func buildUpstream(modDir, dir string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-")
	if err != nil {
		return fmt.Errorf("plugin build dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-trimpath", "-o", tmp + "/"}
	for _, p := range UpstreamPlugins {
		args = append(args, "./"+p)
	}
	if _, err := goCommand(modDir, args...); err != nil {
		return fmt.Errorf("build upstream CNI plugins: %w", err)
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("install upstream CNI plugins: %w", err)
	}
	return nil
}

func haveAll(dir string) bool {
	for _, p := range UpstreamPlugins {
		if _, err := os.Stat(filepath.Join(dir, filepath.Base(p))); err != nil {
			return false
		}
	}
	return true
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		_ = f.Close()
	}, nil
}

// goCommand runs the go tool in dir (GOWORK off, so a workspace elsewhere
// does not change what is built) and returns its stdout.
func goCommand(dir string, args ...string) (string, error) {
	cmd := exec.Command(goTool(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// goTool is the go command on PATH (go test puts its own first), else the
// usual install location.
func goTool() string {
	if path, err := exec.LookPath("go"); err == nil {
		return path
	}
	return "/usr/local/go/bin/go"
}
