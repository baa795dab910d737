package netns

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/railcni/rail/integration/harness"
	"github.com/railcni/rail/pkg/api"
)

func TestZDebug(t *testing.T) {
	node := newNode(t, harness.NodeOptions{Machine: "lab-1x1"})
	before := snapshot(t, node)
	network := chain(t, node, "1.1.0", map[string]any{"mode": api.ModeMacvlan})
	for i := 0; i < 40; i++ {
		pod := newPod(t, node, fmt.Sprintf("c%d", i), map[string]string{api.AnnotationGPUs: "0"})
		ctx := context.Background()
		if _, err := network.Add(ctx, pod); err != nil {
			t.Fatal(err)
		}
		links, _ := pod.Links()
		out, _ := exec.Command("ip", "netns", "exec", node.Netns.Name, "ip", "-o", "link").CombinedOutput()
		if err := network.Del(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if err := node.DeletePodNetns(pod); err != nil {
			t.Fatal(err)
		}
		s := snapshot(t, node)
		if d := before.Diff(s); len(d) > 0 {
			t.Logf("cycle %d diff %v\npod links %+v\nnode links %s", i, d, links, out)
		}
	}
}
