package vm

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"

	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/netnstest"
	"github.com/railcni/rail/pkg/rdma"
)

// rdmaPod is one pod of the traffic test: its netns, its address and the
// rxe it created on its rail interface.
type rdmaPod struct {
	netns ns.NetNS
	addr  netip.Prefix
	dev   string
}

// TestRDMATrafficBetweenMacvlanPods: in shared mode, the mode a macvlan
// attachment relies on, two pods get macvlan children of one netdev from
// pkg/attach, each creates a Soft-RoCE device on its rail0, and RDMA flows
// between them: raw verbs (ibv_rc_pingpong, RC send/recv) and rdma_cm
// (rping, RDMA read/write). Both devices are visible in every netns.
func TestRDMATrafficBetweenMacvlanPods(t *testing.T) {
	requireBoot(t, rdma.NetnsShared)
	for _, tool := range []string{"ibv_rc_pingpong", "rping", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing in the guest (run.sh installs rdma-core's tools on the host): %v", tool, err)
		}
	}
	parent, _ := addVethPair(t)
	server := newRDMAPod(t, parent, "10.78.0.1/24")
	client := newRDMAPod(t, parent, "10.78.0.2/24")
	for _, p := range []rdmaPod{server, client} {
		for where, n := range map[string]ns.NetNS{"guest": nil, "server pod": server.netns, "client pod": client.netns} {
			if !slices.Contains(rdmaDevices(t, rdmaHandle(t, n)), p.dev) {
				t.Errorf("shared mode: the %s netns does not see %s", where, p.dev)
			}
		}
	}

	t.Run("ibv_rc_pingpong", func(t *testing.T) {
		srv := []string{"ibv_rc_pingpong", "-d", server.dev, "-g", gidIndex(t, server), "-n", "50"}
		cli := append([]string{"ibv_rc_pingpong", "-d", client.dev, "-g", gidIndex(t, client), "-n", "50"}, server.addr.Addr().String())
		out := exchange(t, server, client, srv, cli, "Couldn't connect")
		if !strings.Contains(out, "50 iters in") {
			t.Errorf("client finished without reporting 50 iterations:\n%s", out)
		}
	})
	t.Run("rping", func(t *testing.T) {
		srv := []string{"rping", "-s", "-a", server.addr.Addr().String(), "-C", "3"}
		cli := []string{"rping", "-c", "-a", server.addr.Addr().String(), "-C", "3", "-v"}
		out := exchange(t, server, client, srv, cli, "RDMA_CM_EVENT_REJECTED")
		if n := strings.Count(out, "rdma-ping-"); n != 3 {
			t.Errorf("client echoed %d pings, want 3:\n%s", n, out)
		}
	})
}

// newRDMAPod makes a pod netns with a macvlan rail0 on parent (through
// pkg/attach, as the CNI plugin does) and an rxe on rail0 created inside
// the pod.
func newRDMAPod(t *testing.T, parent, addr string) rdmaPod {
	t.Helper()
	p := rdmaPod{netns: newNetns(t), addr: netip.MustParsePrefix(addr), dev: netnstest.UniqueName(t, "rxp")}
	spec := attach.Spec{Mode: attach.ModeMacvlan, Parent: parent, Name: "rail0", Addresses: []netip.Prefix{p.addr}}
	if _, err := attach.AttachAll(p.netns.Path(), []attach.Spec{spec}); err != nil {
		t.Fatalf("attach macvlan of %s: %v", parent, err)
	}
	t.Cleanup(func() {
		if err := attach.Detach(p.netns.Path(), spec); err != nil {
			t.Errorf("detach %s: %v", p.netns.Path(), err)
		}
	})
	addRxe(t, rdmaHandle(t, p.netns), p.dev, "rail0")
	return p
}

// gidIndex finds the GID table entry of the pod's IPv4 address
// (::ffff:a.b.c.d, RoCE v2) on the pod's rxe.
func gidIndex(t *testing.T, p rdmaPod) string {
	t.Helper()
	a := p.addr.Addr().As4()
	want := fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", a[0], a[1], a[2], a[3])
	var seen []string
	for i := 0; i < 16; i++ {
		b, err := os.ReadFile(fmt.Sprintf("/sys/class/infiniband/%s/ports/1/gids/%d", p.dev, i))
		if err != nil {
			break
		}
		gid := strings.TrimSpace(string(b))
		if gid == want {
			return strconv.Itoa(i)
		}
		seen = append(seen, gid)
	}
	t.Fatalf("%s has no GID %s for %s; its table starts %v", p.dev, want, p.addr, seen)
	return ""
}

// exchange runs server in its pod, then client in its pod until it stops
// failing with notReady (the server is not listening yet), and returns
// the client's output. Both must exit 0.
func exchange(t *testing.T, server, client rdmaPod, srvArgs, cliArgs []string, notReady string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := inNetns(ctx, server, srvArgs)
	var srvOut strings.Builder
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		t.Fatalf("start %v: %v", srvArgs, err)
	}
	var out []byte
	var err error
	for {
		out, err = inNetns(ctx, client, cliArgs).CombinedOutput()
		if err == nil || !strings.Contains(string(out), notReady) || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	srvErr := srv.Wait()
	if err != nil || srvErr != nil {
		t.Fatalf("client %v: %v\n%s\nserver %v: %v\n%s", cliArgs, err, out, srvArgs, srvErr, srvOut.String())
	}
	t.Logf("client %s:\n%s", cliArgs[0], out)
	return string(out)
}

// inNetns runs args in the pod's network namespace through nsenter.
func inNetns(ctx context.Context, p rdmaPod, args []string) *exec.Cmd {
	return exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + p.netns.Path(), "--"}, args...)...)
}
