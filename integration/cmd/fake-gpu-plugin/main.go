// Command fake-gpu-plugin is a kubelet device plugin (deviceplugin/v1beta1)
// that advertises GPUs which do not exist, so a node without GPUs schedules
// GPU pods and reports their device IDs through PodResources, as the NVIDIA
// device plugin does:
//
//	fake-gpu-plugin [--resource nvidia.com/gpu] [--count 8] [--ids ID,ID,...] [--dir /var/lib/kubelet/device-plugins]
//
// Device IDs are GPU-00000000-0000-0000-0000-00000000000N (N in hex), the
// UUIDs the Kubernetes rig writes into its fake machine, or the --ids given
// (e.g. PCI addresses, as the SR-IOV network device plugin reports VFs). Allocate sets
// NVIDIA_VISIBLE_DEVICES; the preferred allocation is the lowest free IDs,
// so pairs come aligned (0-1, 2-3, ...) as GPUs sharing a switch would. The kubelet deletes every socket in its dir when
// it restarts: the plugin then serves and registers again.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fake-gpu-plugin:", err)
		os.Exit(1)
	}
}

func run() error {
	var opt options
	flag.StringVar(&opt.resource, "resource", "nvidia.com/gpu", "extended resource name")
	flag.IntVar(&opt.count, "count", 8, "number of GPUs (1 to 4096)")
	flag.StringVar(&opt.dir, "dir", "/var/lib/kubelet/device-plugins", "the kubelet's device plugin dir (kubelet.sock)")
	flag.DurationVar(&opt.poll, "poll", time.Second, "how often to check that the kubelet still knows the plugin")
	ids := flag.String("ids", "", "comma-separated device IDs instead of --count GPU UUIDs")
	flag.Parse()
	if *ids != "" {
		opt.ids = strings.Split(*ids, ",")
		opt.count = len(opt.ids)
	}
	if opt.count < 1 || opt.count > 4096 {
		return fmt.Errorf("--count %d: want 1 to 4096", opt.count)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	return newPlugin(opt, log).run(ctx)
}

// deviceID is the ID of device i: --ids[i], else GPUUUID(i).
func (o options) deviceID(i int) string {
	if len(o.ids) > 0 {
		return o.ids[i]
	}
	return GPUUUID(i)
}

// GPUUUID is the device ID of GPU i.
func GPUUUID(i int) string { return fmt.Sprintf("GPU-00000000-0000-0000-0000-%012x", i) }
