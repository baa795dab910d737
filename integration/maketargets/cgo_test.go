package maketargets

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goTestRace is a command line running the race detector.
var goTestRace = regexp.MustCompile(`(\bgo|\$\(GO\)|"\$GO") test .*-race\b`)

// TestRaceRunsWithCgo: -race needs cgo ("go: -race requires cgo"), so each
// line of the Makefile and the scripts that runs it turns cgo on itself,
// whatever the caller's environment (make once exported CGO_ENABLED=0 to
// every recipe, and `make test-k8s` failed at once).
func TestRaceRunsWithCgo(t *testing.T) {
	files := []string{"../../Makefile"}
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".sh") || filepath.Dir(path) == "../../.ci") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "#") || !goTestRace.MatchString(line) {
				continue
			}
			checked++
			if !strings.Contains(line, "CGO_ENABLED=1 ") {
				t.Errorf("%s:%d runs -race without CGO_ENABLED=1 on the line: %s", file, n, line)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if checked == 0 {
		t.Fatalf("no line of %v runs go test -race: the check is broken", files)
	}
}

// TestMakeLeavesCgoAlone: make hands its recipes the caller's CGO_ENABLED
// (unset here); only build turns cgo off, on its own lines.
func TestMakeLeavesCgoAlone(t *testing.T) {
	cmd := exec.Command("make", "-s", "-C", "../..", "--eval", "rail-cgo-env: ; @echo \"$${CGO_ENABLED-unset}\"", "rail-cgo-env")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CGO_ENABLED=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "unset" {
		t.Errorf("a make recipe sees CGO_ENABLED=%s, want it unset as the caller left it", got)
	}
}
