package attach

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/plugins/pkg/ns"
)

type sysctlSetting struct{ key, value string }

// arpSettings are the per-interface sysctls for several rails in one
// subnet: answer ARP only for addresses on the asking interface, and
// announce with the interface's own address.
func arpSettings() []sysctlSetting {
	return []sysctlSetting{{"arp_ignore", "1"}, {"arp_announce", "2"}}
}

// arpSysctlPath is the /proc/sys file of key for ifName. /proc/sys/net
// shows the netns of the thread that opens it, so callers open it from a
// thread inside the pod netns (ns.NetNS.Do).
func arpSysctlPath(ifName, key string) string {
	return filepath.Join("/proc/sys/net/ipv4/conf", ifName, key)
}

// tuneARP writes the ARP sysctls of ifName inside pod and pushes an inverse
// that writes back the previous values.
func tuneARP(pod ns.NetNS, ifName string, undo *undoList) error {
	for _, set := range arpSettings() {
		path := arpSysctlPath(ifName, set.key)
		old, err := readSysctlIn(pod, path)
		if err != nil {
			return err
		}
		if err := writeSysctlIn(pod, path, set.value); err != nil {
			return err
		}
		undo.push("sysctl "+set.key+" of "+ifName, func() error { return writeSysctlIn(pod, path, old) })
	}
	return nil
}

// checkARP verifies the ARP sysctls of ifName inside pod.
func checkARP(pod ns.NetNS, ifName string) error {
	for _, set := range arpSettings() {
		got, err := readSysctlIn(pod, arpSysctlPath(ifName, set.key))
		if err != nil {
			return err
		}
		if got != set.value {
			return fmt.Errorf("sysctl net.ipv4.conf.%s.%s is %s, want %s", ifName, set.key, got, set.value)
		}
	}
	return nil
}

func readSysctlIn(pod ns.NetNS, path string) (string, error) {
	var value string
	err := pod.Do(func(ns.NetNS) error {
		b, err := os.ReadFile(path)
		value = strings.TrimSpace(string(b))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("read %s in pod netns: %w", path, err)
	}
	return value, nil
}

func writeSysctlIn(pod ns.NetNS, path, value string) error {
	err := pod.Do(func(ns.NetNS) error {
		return os.WriteFile(path, []byte(value), 0o644)
	})
	if err != nil {
		return fmt.Errorf("write %s=%s in pod netns: %w", path, value, err)
	}
	return nil
}
