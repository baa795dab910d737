package vm

import (
	"fmt"
	"strings"
	"testing"
)

// containerView is what a container sees of RDMA, read by one exec (every
// crictl exec costs seconds under TCG): its /dev/infiniband nodes as
// "type major:minor", `ulimit -l`, its environment, and ibv_devinfo's
// output and exit code for one device.
type containerView struct {
	nodes      map[string]string
	memlock    string
	env        map[string]string
	devinfo    string
	devinfoErr bool
}

// probeScript prints one fact per line, tagged by its first word.
const probeScript = `for f in /dev/infiniband/*; do [ -e "$f" ] && stat -c 'node %%n %%F %%t:%%T' "$f"; done
echo "memlock $(ulimit -l)"
env | sed 's/^/env /'
ibv_devinfo -d %s >/tmp/devinfo 2>&1; echo "devinfo-rc $?"
sed 's/^/devinfo /' /tmp/devinfo
`

// probe reads the container's view of RDMA device dev.
func (n *guestNode) probe(t *testing.T, ctr, dev string) containerView {
	t.Helper()
	out := n.mustExec(t, ctr, "sh", "-c", fmt.Sprintf(probeScript, dev))
	v := containerView{nodes: map[string]string{}, env: map[string]string{}}
	var devinfo []string
	for _, line := range strings.Split(out, "\n") {
		tag, rest, _ := strings.Cut(line, " ")
		switch tag {
		case "node":
			path, kind, _ := strings.Cut(rest, " ")
			v.nodes[strings.TrimPrefix(path, "/dev/infiniband/")] = kind
		case "memlock":
			v.memlock = rest
		case "env":
			if k, val, ok := strings.Cut(rest, "="); ok {
				v.env[k] = val
			}
		case "devinfo-rc":
			v.devinfoErr = rest != "0"
		case "devinfo":
			devinfo = append(devinfo, rest)
		}
	}
	v.devinfo = strings.Join(devinfo, "\n")
	return v
}
