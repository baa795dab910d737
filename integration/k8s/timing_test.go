package k8s

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// startup is what measureStartup found: kubectl apply -> Running per pod.
type startup struct {
	median, p90 time.Duration
}

// measureStartup creates count pods without GPUs one after the other, each
// timed from `kubectl apply` until kubectl sees it Running, then deletes them.
func (n *node) measureStartup(t *testing.T, label string, count int) startup {
	t.Helper()
	c := n.c
	app := "startup-" + label
	took := make([]time.Duration, 0, count)
	for i := range count {
		name := fmt.Sprintf("%s-%d", app, i)
		manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s, labels: {app: %s}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: main, image: %s, imagePullPolicy: Never, command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]}
`, name, e2eNamespace, app, busybox)
		t0 := time.Now()
		c.kubectlApply(t, manifest)
		waitFor(t, name+" to run", 2*time.Minute, func() bool {
			out, err := c.kubectlErr("get", "pod", "-n", e2eNamespace, name, "-o", "jsonpath={.status.phase}")
			return err == nil && out == "Running"
		})
		took = append(took, time.Since(t0))
	}
	c.kubectl(t, "delete", "pods", "-n", e2eNamespace, "-l", "app="+app, "--wait=true", "--timeout=3m")
	s := summarize(took)
	t.Logf("%s: %d pods, kubectl apply -> Running: median %v, p90 %v", label, count, s.median, s.p90)
	return s
}

// summarize returns the median and the 90th percentile (nearest rank).
func summarize(d []time.Duration) startup {
	if len(d) == 0 {
		return startup{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))].Round(time.Millisecond)
	}
	return startup{median: rank(0.5), p90: rank(0.9)}
}
