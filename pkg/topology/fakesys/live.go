package fakesys

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// portStateNumbers are the numbers sysfs prints before a port state.
var portStateNumbers = map[string]int{"DOWN": 1, "INIT": 2, "ARMED": 3, "ACTIVE": 4, "ACTIVE_DEFER": 5}

// SetPortState writes a port's state as the kernel shows it ("4: ACTIVE"),
// the way a port going down or up changes a running machine.
func SetPortState(root, nic string, port int, state string) error {
	num, ok := portStateNumbers[state]
	if !ok {
		return fmt.Errorf("port state %q: want DOWN, INIT, ARMED, ACTIVE or ACTIVE_DEFER", state)
	}
	f := &files{root: root}
	f.file(portPath(nic, port)+"/state", strconv.Itoa(num)+": "+state)
	return f.err
}

// WriteGIDs fills a port's GID table, entry i with gids[i] and, where
// given, its type (types[i]: "RoCE v2", "IB/RoCE v1").
func WriteGIDs(root, nic string, port int, gids, types []string) error {
	f := &files{root: root}
	dir := portPath(nic, port)
	f.dir(dir + "/gids")
	f.dir(dir + "/gid_attrs/types")
	for i, gid := range gids {
		f.file(dir+"/gids/"+strconv.Itoa(i), gid)
		if i < len(types) {
			f.file(dir+"/gid_attrs/types/"+strconv.Itoa(i), types[i])
		}
	}
	return f.err
}

func portPath(nic string, port int) string {
	return "/sys/class/infiniband/" + nic + "/ports/" + strconv.Itoa(port)
}

// RemoveNetdev takes a netdev out of the host's sysfs, as moving it into a
// pod's netns does: its directory and its /sys/class/net link go.
func RemoveNetdev(root, name string) error {
	link := filepath.Join(root, "sys/class/net", name)
	dir, err := filepath.EvalSymlinks(link)
	if err != nil {
		return fmt.Errorf("netdev %s: %w", name, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("netdev %s: %w", name, err)
	}
	return os.Remove(link)
}

// WritePKeys fills a port's P_Key table, entry i with pkeys[i] ("0xffff",
// "0x8001"), as the subnet manager programs it.
func WritePKeys(root, nic string, port int, pkeys []string) error {
	f := &files{root: root}
	dir := portPath(nic, port) + "/pkeys"
	f.dir(dir)
	for i, pkey := range pkeys {
		f.file(dir+"/"+strconv.Itoa(i), pkey)
	}
	return f.err
}

// SetNetdevState writes a netdev's operstate and carrier as the kernel
// shows a link that is up ("up", carrier 1) or lost its carrier or was set
// down ("down", carrier 0).
func SetNetdevState(root, netdev string, up bool) error {
	f := &files{root: root}
	dir := "/sys/class/net/" + netdev
	if _, err := os.Stat(f.host(dir)); err != nil {
		return fmt.Errorf("netdev %s: %w", netdev, err)
	}
	oper, carrier := "down", "0"
	if up {
		oper, carrier = "up", "1"
	}
	f.file(dir+"/operstate", oper)
	f.file(dir+"/carrier", carrier)
	return f.err
}
