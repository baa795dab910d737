package pool

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/railcni/rail/daemon/kubeclient"
	"github.com/railcni/rail/integration/child"
)

// latePool is created while raild runs.
const latePool = `
apiVersion: rail.dev/v1alpha1
kind: RailPool
metadata:
  name: late
spec:
  subnet: fd00:60::/48
  blockSize: 64
  nodeSelector:
    matchLabels:
      rail.dev/gpu: h100
`

// TestRailPoolAddedLater: a RailPool created after raild started is
// claimed and handed out without a restart; one with a config pool's name
// is reported, not added.
func TestRailPoolAddedLater(t *testing.T) {
	c := newCluster(t)
	c.createNode(t, "gpu-00", map[string]string{"rail.dev/gpu": "h100"})
	c.createPool(t, decodePool)
	started := time.Now()
	lines, stop := startFollower(t, c.Kubeconfig, c.as, "gpu-00", envFollow+"=1", envConfig+"=prefill")
	if first := <-lines; !strings.Contains(first, `"pool":"decode"`) {
		t.Fatalf("first line %q: want the decode block", first)
	}
	c.createPool(t, latePool)
	got := readAdded(t, lines)
	if got.Err != "" || got.Pool != "late" || !strings.HasPrefix(got.Subnet, "fd00:60:") || got.Size == 0 {
		t.Fatalf("after creating railpool late: %+v; want its /64 block added", got)
	}
	if len(c.blocks(t, "late")) != 1 {
		t.Errorf("late has %d blocks, want 1", len(c.blocks(t, "late")))
	}
	c.createPool(t, strings.ReplaceAll(latePool, "name: late", "name: prefill"))
	got = readAdded(t, lines)
	want := `railpool "prefill": raild's config has a pool of the same name (pools[0])`
	if !strings.Contains(got.Err, want) {
		t.Fatalf("after creating railpool prefill: %+v; want the error %q", got, want)
	}
	// The watch outlives the clients' request timeout: the API server has
	// seen no RailPool watch end (a cut one ends, is counted, and restarts).
	time.Sleep(time.Until(started.Add(kubeclient.DefaultTimeout + 2*time.Second)))
	if ended := c.endedWatches(t, "railpools"); ended != 0 {
		t.Errorf("%d railpool watches ended within %s: the watch is cut by a request timeout", ended, kubeclient.DefaultTimeout+2*time.Second)
	}
	// The chart's RBAC lets the claimer list and watch: client-go logs a refused request.
	if stderr := stop(); strings.Contains(strings.ToLower(stderr), "forbidden") {
		t.Errorf("the claimer was refused a request under the chart's RBAC:\n%s", stderr)
	}
}

// TestRailPoolSchema: the API server refuses what the CRD's schema says
// is wrong, naming the field, before any raild sees it.
func TestRailPoolSchema(t *testing.T) {
	c := newCluster(t)
	tests := []struct {
		name, from, to, want string
	}{
		{name: "no block size", from: "  blockSize: 64\n", to: "", want: "spec.blockSize: Required value"},
		{name: "unknown distance class", from: "  blockSize: 64\n", to: "  blockSize: 64\n  maxDistance: FAR\n", want: `spec.maxDistance: Unsupported value: "FAR"`},
		{name: "negative rail", from: "  blockSize: 64\n", to: "  blockSize: 64\n  rail: -1\n", want: "spec.rail: Invalid value: -1"},
		{name: "name too long for a pool", from: "name: late", to: "name: " + strings.Repeat("x", 64), want: "metadata.name: Too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			manifest := strings.Replace(latePool, tt.from, tt.to, 1)
			if manifest == latePool {
				t.Fatalf("%q is not in the manifest", tt.from)
			}
			err := c.tryCreatePool(t, manifest)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("create = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func readAdded(t *testing.T, lines <-chan string) added {
	t.Helper()
	select {
	case line, ok := <-lines:
		var a added
		if !ok || json.Unmarshal([]byte(line), &a) != nil {
			t.Fatalf("claimer printed %q (open %v), want a JSON line", line, ok)
		}
		return a
	case <-time.After(time.Minute):
		t.Fatal("no pool added within a minute")
	}
	return added{}
}

// startFollower runs a following claimer and returns its stdout lines
// and stop, which kills it and returns what it wrote on stderr. It is
// killed when the test ends in any case.
func startFollower(t *testing.T, kubeconfig, as, node string, env ...string) (<-chan string, func() string) {
	t.Helper()
	cmd := claimCmd(kubeconfig, as, node, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// A pipe of its own, not StdoutPipe: the child's waiter would close
	// StdoutPipe's read end before every line was read.
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	proc, err := child.Start(cmd, nil)
	w.Close()
	if err != nil {
		stdout.Close()
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		defer stdout.Close()
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	var once sync.Once
	stop := func() string {
		once.Do(func() {
			_ = proc.Signal(syscall.SIGKILL)
			for range lines { // drained to EOF
			}
			_ = proc.Wait()
		})
		return stderr.String()
	}
	t.Cleanup(func() {
		if out := stop(); t.Failed() {
			t.Logf("claimer for %s wrote on stderr:\n%s", node, out)
		}
	})
	return lines, stop
}
