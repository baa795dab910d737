package vm

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// uverbsOf returns the uverbs char device name of an RDMA device and the
// guest's node for it, as `stat -c '%F %t:%T'` prints it.
func uverbsOf(t *testing.T, dev string) (string, string) {
	t.Helper()
	for _, name := range charDevsOf(t, dev) {
		if strings.HasPrefix(name, "uverbs") {
			return name, guestDevNode(t, name)
		}
	}
	t.Fatalf("%s has no uverbs device (is ib_uverbs loaded?)", dev)
	return "", ""
}

// charDevsOf names the char devices (uverbsN, umadN, issmN) of an RDMA
// device, from their classes' ibdev files.
func charDevsOf(t *testing.T, dev string) []string {
	t.Helper()
	var names []string
	for _, class := range []string{"infiniband_verbs", "infiniband_mad"} {
		files, _ := filepath.Glob(filepath.Join("/sys/class", class, "*/ibdev"))
		for _, f := range files {
			if ibdev, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(ibdev)) == dev {
				names = append(names, filepath.Base(filepath.Dir(f)))
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("no char device of %s in /sys/class/infiniband_{verbs,mad}", dev)
	}
	return names
}

// guestDevNode is the guest's /dev/infiniband/<name> as "type major:minor".
func guestDevNode(t *testing.T, name string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/dev/infiniband/"+name, &st); err != nil {
		t.Fatalf("the guest has no /dev/infiniband/%s: %v", name, err)
	}
	return nodeKind(st)
}

// gidEntry is one populated entry of an RDMA port's GID table.
type gidEntry struct {
	index  int
	kind   string // "RoCE v2", "IB/RoCE v1"
	netdev string
}

// gidEntryOf finds addr (IPv4-mapped) in the kernel's GID table of dev's
// port 1.
func gidEntryOf(t *testing.T, dev string, addr netip.Addr) gidEntry {
	t.Helper()
	table := gidTable(dev)
	for _, entry := range table {
		f := strings.SplitN(entry, " ", 3)
		gid, err := netip.ParseAddr(f[1])
		if err != nil || gid.Unmap() != addr.Unmap() {
			continue
		}
		idx, _ := strconv.Atoi(f[0])
		kind, netdev := f[2], ""
		if cut := strings.LastIndex(f[2], " "); cut >= 0 {
			kind, netdev = f[2][:cut], f[2][cut+1:]
		}
		return gidEntry{index: idx, kind: kind, netdev: netdev}
	}
	t.Fatalf("the kernel's GID table of %s has no entry for %s:\n%s", dev, addr, strings.Join(table, "\n"))
	return gidEntry{}
}

// counter reads a numeric sysfs attribute.
func counter(t *testing.T, path string) uint64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %q is not a counter", path, raw)
	}
	return v
}

// pingpong is one ibv_rc_pingpong run between two processes of containers
// (server and client may be the same container).
type pingpong struct {
	dev      string
	gidIndex int
	size     int
	iters    int
}

func (pp pingpong) args() []string {
	return []string{"ibv_rc_pingpong", "-d", pp.dev, "-g", strconv.Itoa(pp.gidIndex),
		"-s", strconv.Itoa(pp.size), "-n", strconv.Itoa(pp.iters), "-c"}
}

// pingpongScript runs the server in the background, then the client
// (which reaches the server over TCP, for the QP numbers only) until it
// stops failing with "Couldn't connect"; both outputs follow, and the exit
// code is the server's (the client's when it gave up).
const pingpongScript = `%[1]s >/tmp/srv.out 2>&1 &
srv=$!
tries=0
until %[1]s %[2]s >/tmp/cli.out 2>&1; do
  tries=$((tries+1))
  if [ $tries -ge 60 ] || ! grep -q "Couldn't connect" /tmp/cli.out; then
    cat /tmp/cli.out; kill $srv; echo "== server"; cat /tmp/srv.out; exit 1
  fi
  sleep 1
done
wait $srv; rc=$?
cat /tmp/cli.out; echo "== server (exit $rc)"; cat /tmp/srv.out
exit $rc
`

// run runs server and client as two processes of one container and
// returns their output; both must succeed.
func (pp pingpong) run(t *testing.T, n *guestNode, ctr, server string) string {
	t.Helper()
	script := fmt.Sprintf(pingpongScript, strings.Join(pp.args(), " "), server)
	out, err := n.exec(ctr, "sh", "-c", script)
	if err != nil {
		t.Fatalf("ibv_rc_pingpong: %v\n%s", err, out)
	}
	return out
}

// wantIters checks the client's report of a completed run.
func (pp pingpong) wantIters(t *testing.T, out string) {
	t.Helper()
	want := fmt.Sprintf("%d bytes in", 2*pp.size*pp.iters)
	if !strings.Contains(out, want) || !strings.Contains(out, fmt.Sprintf("%d iters in", pp.iters)) {
		t.Errorf("ibv_rc_pingpong did not report %q and %d iterations:\n%s", want, pp.iters, out)
	}
}
