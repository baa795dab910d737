package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/railcni/rail/integration/harness"
)

// settle bounds the wait for the kernel's asynchronous work (IPv6
// link-local addresses, carrier, namespaces torn down) and for raild to
// close the connections of the last plugins, before a check may fail.
const settle = 5 * time.Second

// baseline is what the bench must leave as it found it.
type baseline struct {
	node     harness.Snapshot // the node netns before any ADD
	raildFDs map[string]int   // raild's open files by kind, after the warm-up
}

// leakCheck finds what the bench left behind once every pod is deleted.
type leakCheck struct {
	node   *harness.Node
	pods   []*harness.Pod
	kernel *kernelFloors
	base   baseline
}

// run lists the leaks; an error means the check itself could not run.
func (c leakCheck) run() ([]string, error) {
	leaks, err := c.inPods()
	if err != nil {
		return nil, err
	}
	steps := []func() ([]string, error){c.podNetns, c.nodeNetns, c.leases, c.raildFiles, c.hostLocal, c.cniCache}
	for _, step := range steps {
		found, err := step()
		if err != nil {
			return nil, err
		}
		leaks = append(leaks, found...)
	}
	return append(leaks, c.kernel.leftover()...), nil
}

// inPods lists interfaces other than lo left in a pod, then deletes the
// pods' namespaces (stand-in NICs left inside return to the node netns,
// where the node check sees them).
func (c leakCheck) inPods() ([]string, error) {
	var leaks []string
	for _, pod := range c.pods {
		left, err := podLinksLeft(pod)
		if err != nil {
			return nil, err
		}
		leaks = append(leaks, left...)
		if err := c.node.DeletePodNetns(pod); err != nil {
			return nil, err
		}
	}
	return leaks, nil
}

// podLinksLeft lists the links other than lo in a pod.
func podLinksLeft(pod *harness.Pod) ([]string, error) {
	links, err := pod.Links()
	if err != nil {
		return nil, err
	}
	var leaks []string
	for _, l := range links {
		if l.Name != "lo" {
			leaks = append(leaks, fmt.Sprintf("pod %s: %s link %s left (addresses %v)", pod.Name, l.Type, l.Name, l.Addrs))
		}
	}
	return leaks, nil
}

func (c leakCheck) podNetns() ([]string, error) {
	left, err := c.node.PodNetnsLeft()
	if len(left) > 0 {
		return []string{fmt.Sprintf("pod netns left: %v", left)}, err
	}
	return nil, err
}

// nodeNetns compares the node netns with the baseline (links, addresses,
// routes, rules) and every stand-in NIC with how it was made.
func (c leakCheck) nodeNetns() ([]string, error) {
	diff, err := harness.WaitSame(c.node.Netns, c.base.node, settle)
	if err != nil {
		return nil, err
	}
	var leaks []string
	for _, d := range diff {
		leaks = append(leaks, "node netns changed: "+d)
	}
	return append(leaks, c.node.Fabric.Present()...), nil
}

func (c leakCheck) leases() ([]string, error) {
	leases, err := c.node.Raild.Leases()
	if err != nil {
		return nil, err
	}
	var leaks []string
	for _, l := range leases {
		leaks = append(leaks, fmt.Sprintf("raild lease left: sandbox %s interface %s address %s", l.Sandbox, l.IfName, l.Address))
	}
	return leaks, nil
}

// raildFiles waits briefly for raild to close what the last plugins left,
// then reports every kind of file open more often than after the warm-up.
func (c leakCheck) raildFiles() ([]string, error) {
	deadline := time.Now().Add(settle)
	for {
		fds, err := harness.OpenFDs(c.node.Raild.PID())
		if err != nil {
			return nil, err
		}
		leaks := moreFiles(harness.FDCounts(fds), c.base.raildFDs)
		if len(leaks) == 0 || time.Now().After(deadline) {
			return leaks, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func moreFiles(now, then map[string]int) []string {
	var out []string
	for kind, n := range now {
		if n > then[kind] {
			out = append(out, fmt.Sprintf("raild has %d open %s, %d after the warm-up", n, kind, then[kind]))
		}
	}
	return out
}

// hostLocal lists addresses host-local still reserves (a file named after
// the address in its data dir).
func (c leakCheck) hostLocal() ([]string, error) {
	return walkFiles(filepath.Join(c.node.Dir, "host-local"), func(path string) string {
		if net.ParseIP(filepath.Base(path)) == nil {
			return ""
		}
		return "host-local reservation left: " + path
	})
}

// cniCache lists results libcni still caches (DEL removes them).
func (c leakCheck) cniCache() ([]string, error) {
	return walkFiles(filepath.Join(c.node.Dir, "cni-cache", "results"), func(path string) string {
		return "CNI cache entry left: " + filepath.Base(path)
	})
}

// walkFiles applies leak to every regular file below dir (none when dir
// does not exist) and keeps what it reports.
func walkFiles(dir string, leak func(path string) string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if msg := leak(path); msg != "" {
			out = append(out, msg)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return out, err
}
