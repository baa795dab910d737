package nri

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	nriapi "github.com/containerd/nri/pkg/api"

	"github.com/railcni/rail/pkg/api"
)

// notified collects the sandboxes a plugin told about.
type notified struct{ ch chan string }

func (n *notified) changed(sandbox string) {
	select {
	case n.ch <- sandbox:
	default:
	}
}

func (n *notified) drain() []string {
	var out []string
	for {
		select {
		case s := <-n.ch:
			out = append(out, s)
		default:
			return out
		}
	}
}

func recordingPlugin(t *testing.T, root string, st *fakeState) (*Plugin, *notified) {
	t.Helper()
	p, _ := newTestPlugin(t, Config{}, root, st)
	n := &notified{ch: make(chan string, 16)}
	p.changed = n.changed
	return p, n
}

func started(c *nriapi.Container, pid uint32) *nriapi.Container {
	c.Pid = pid
	return c
}

func TestContainerRecords(t *testing.T) {
	uverbs0 := DeviceRecord{Path: "/dev/infiniband/uverbs0", Major: 231, Minor: 192}
	cm := DeviceRecord{Path: "/dev/infiniband/rdma_cm", Major: 10, Minor: 58}
	tests := []struct {
		name   string
		leases func(*fakeState)
		run    func(ctx context.Context, p *Plugin)
		// procs are the processes running (pid → start time), as
		// /proc/<pid>/stat shows them below the machine's root.
		procs    map[int]uint64
		want     []ContainerRecord
		notified []string
	}{{
		name:   "started: its process pinned",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		procs:  map[int]uint64{4242: 987654},
		run: func(ctx context.Context, p *Plugin) {
			_, _, _ = p.CreateContainer(ctx, pod("s1", "default", nil), ctr("app"))
			_ = p.PostStartContainer(ctx, pod("s1", "default", nil), started(ctr("app"), 4242))
		},
		want:     []ContainerRecord{{ID: "c-app", Name: "app", Pid: 4242, Start: 987654, Devices: []DeviceRecord{uverbs0, cm}, GIDIndex: -1}},
		notified: []string{"s1"},
	}, {
		name:   "stopped: its process dropped",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		procs:  map[int]uint64{4242: 987654},
		run: func(ctx context.Context, p *Plugin) {
			_, _, _ = p.CreateContainer(ctx, pod("s1", "default", nil), ctr("app"))
			_ = p.PostStartContainer(ctx, pod("s1", "default", nil), started(ctr("app"), 4242))
			_, _ = p.StopContainer(ctx, pod("s1", "default", nil), started(ctr("app"), 4242))
		},
		want:     []ContainerRecord{{ID: "c-app", Name: "app", Pid: 4242, Devices: []DeviceRecord{uverbs0, cm}, GIDIndex: -1}},
		notified: []string{"s1", "s1"},
	}, {
		name:   "created then started",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		run: func(ctx context.Context, p *Plugin) {
			_, _, _ = p.CreateContainer(ctx, pod("s1", "default", nil), ctr("app"))
			_ = p.PostStartContainer(ctx, pod("s1", "default", nil), started(ctr("app"), 4242))
		},
		want:     []ContainerRecord{{ID: "c-app", Name: "app", Pid: 4242, Devices: []DeviceRecord{uverbs0, cm}, GIDIndex: -1}},
		notified: []string{"s1"},
	}, {
		name: "no lease: no record, nobody told",
		run: func(ctx context.Context, p *Plugin) {
			_, _, _ = p.CreateContainer(ctx, pod("s1", "default", nil), ctr("app"))
			_ = p.PostStartContainer(ctx, pod("s1", "default", nil), started(ctr("app"), 4242))
		},
	}, {
		name:   "the container's own GID index",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		run: func(ctx context.Context, p *Plugin) {
			_, _, _ = p.CreateContainer(ctx, pod("s1", "default", nil), ctr("app", "NCCL_IB_GID_INDEX=5"))
		},
		want: []ContainerRecord{{ID: "c-app", Name: "app", Devices: []DeviceRecord{uverbs0, cm}, GIDIndex: 5}},
	}, {
		name:   "a restarted container replaces its old record",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		run: func(ctx context.Context, p *Plugin) {
			_, _, _ = p.CreateContainer(ctx, pod("s1", "default", nil), ctr("app"))
			_ = p.PostStartContainer(ctx, pod("s1", "default", nil), started(ctr("app"), 10))
			again := ctr("app")
			again.Id = "c-app-2"
			_, _, _ = p.CreateContainer(ctx, pod("s1", "default", nil), again)
			_ = p.PostStartContainer(ctx, pod("s1", "default", nil), started(again, 11))
		},
		want:     []ContainerRecord{{ID: "c-app-2", Name: "app", Pid: 11, Devices: []DeviceRecord{uverbs0, cm}, GIDIndex: -1}},
		notified: []string{"s1", "s1"},
	}, {
		name:   "a stopped sandbox is forgotten",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		run: func(ctx context.Context, p *Plugin) {
			_, _, _ = p.CreateContainer(ctx, pod("s1", "default", nil), ctr("app"))
			_ = p.StopPodSandbox(ctx, pod("s1", "default", nil))
			p.cancelAllReleases()
		},
	}, {
		name:   "synchronize records running containers with their pids",
		leases: func(f *fakeState) { f.add("s1", api.ModeMove, "10.56.0.5/24", "mlx5_0") },
		procs:  map[int]uint64{77: 5000},
		run: func(ctx context.Context, p *Plugin) {
			running := started(ctr("app"), 77)
			running.PodSandboxId = "s1"
			running.State = nriapi.ContainerState_CONTAINER_RUNNING
			gone := started(ctr("done"), 78)
			gone.PodSandboxId = "s1"
			gone.State = nriapi.ContainerState_CONTAINER_STOPPED
			_, _ = p.Synchronize(ctx, []*nriapi.PodSandbox{pod("s1", "default", nil)}, []*nriapi.Container{running, gone})
		},
		want:     []ContainerRecord{{ID: "c-app", Name: "app", Pid: 77, Start: 5000, Devices: []DeviceRecord{uverbs0, cm}, GIDIndex: -1}},
		notified: []string{"s1"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newFakeState()
			if tt.leases != nil {
				tt.leases(st)
			}
			root := t.TempDir()
			for pid, start := range tt.procs {
				dir := filepath.Join(root, "proc", strconv.Itoa(pid))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				stat := fmt.Sprintf("%d (app) S 1 %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %d 2711552 250\n", pid, pid, pid, start)
				if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o444); err != nil {
					t.Fatal(err)
				}
			}
			p, n := recordingPlugin(t, root, st)
			tt.run(context.Background(), p)
			got := p.records.SandboxContainers("s1")
			for i := range tt.want {
				tt.want[i].Memlock = p.cfg.memlock
			}
			if len(got) != len(tt.want) || (len(got) > 0 && !reflect.DeepEqual(got, tt.want)) {
				t.Fatalf("records %+v\nwant    %+v", got, tt.want)
			}
			if got := n.drain(); !slices.Equal(got, tt.notified) {
				t.Fatalf("notified %v, want %v", got, tt.notified)
			}
		})
	}
}
