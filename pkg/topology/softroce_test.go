package topology_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/railcni/rail/pkg/topology"
	"github.com/railcni/rail/pkg/topology/fakesys"
)

// TestPodSoftRoCE lays out a node with a stand-in rxe on its NIC's netdev
// and an rxe rail made in a pod (shared netns mode shows it in the host's
// sysfs): Discover and DiscoverDevice leave the pod's device out of the
// NICs, PodSoftRoCE reads it with its uverbs device, and refuses other
// names and devices that are gone.
func TestPodSoftRoCE(t *testing.T) {
	root := t.TempDir()
	pod := topology.PodSoftRoCEPrefix + "0123abcd"
	host, ok := fakesys.Machine("softroce")
	if !ok {
		t.Fatal("no softroce machine")
	}
	host.SoftRoCE = append(host.SoftRoCE, fakesys.SoftRoCE{RDMA: pod, Netdev: "rail0"})
	if _, err := fakesys.WriteHost(root, "pod-softroce", host, fakesys.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range m.NICs {
		names = append(names, n.Name)
	}
	if strings.Join(names, ",") != "rxe0" {
		t.Errorf("Discover NICs = %v, want [rxe0]: a pod's rxe is not a NIC", names)
	}
	sys, err := topology.OpenSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	if nics, _ := sys.DiscoverDevice(pod); len(nics) != 0 {
		t.Errorf("DiscoverDevice(%s) = %v, want none", pod, nics)
	}
	nic, err := sys.PodSoftRoCE(pod)
	if err != nil {
		t.Fatal(err)
	}
	if nic.Name != pod || nic.Uverbs == nil || !strings.HasPrefix(nic.Uverbs.Name, "uverbs") || nic.Netdev != "rail0" ||
		nic.LinkLayer != topology.Ethernet || nic.Port != 1 {
		t.Errorf("PodSoftRoCE = name %s uverbs %v netdev %s link layer %s port %d", nic.Name, nic.Uverbs, nic.Netdev, nic.LinkLayer, nic.Port)
	}
	for _, bad := range []string{"rxe0", "../" + pod, topology.PodSoftRoCEPrefix + "9999eeee"} {
		_, err := sys.PodSoftRoCE(bad)
		if err == nil {
			t.Errorf("PodSoftRoCE(%q) = nil error", bad)
		}
		if bad == topology.PodSoftRoCEPrefix+"9999eeee" && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("PodSoftRoCE(%q) = %v, want os.ErrNotExist", bad, err)
		}
	}
}

// TestIsPodSoftRoCE: only the prefix and exactly 8 lower-case hex digits
// name a pod's rxe (15 characters, what UCX keeps of a device name); a
// user's rxe that merely starts like one is not rail's to place or sweep.
func TestIsPodSoftRoCE(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"railrxe0123abcd", true},
		{"railrxe01234567", true},
		{"railrxe0123ABCD", false},      // upper case
		{"railrxe0123abc", false},       // 7 digits
		{"railrxe0123abcde", false},     // 9 digits: UCX would cut it
		{"railrxe_0123456789ab", false}, // a 20-character name
		{"railrxe_eth1", false},
		{"railrxe", false},
		{"rxe0", false},
		{"mlx5_0", false},
	} {
		if got := topology.IsPodSoftRoCE(tt.name); got != tt.want {
			t.Errorf("IsPodSoftRoCE(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
