package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/verbs"
)

// plugin holds what the verbs need from outside the process (raild, the
// netlink work, facts about network namespaces), so that their decisions
// are table-tested without root.
type plugin struct {
	raild      func(socket string, timeout time.Duration) verbs.Raild
	links      links
	netnsMode  func() (rdma.NetnsMode, error)
	ownNetns   func(path string) (bool, error)
	netnsAlive func(path string) bool
	logf       func(format string, args ...any)
	stdout     io.Writer // where results go
}

// print writes result in the version the runtime asked for.
func (p *plugin) print(result types.Result, cniVersion string) error {
	return verbs.Print(p.stdout, result, cniVersion)
}

// links is the netlink work of pkg/attach.
type links interface {
	LockPod(netns string) (unlock func(), err error)
	AttachAll(netns string, specs []attach.Spec) ([]attach.Attached, error)
	Detach(netns string, s attach.Spec) error
	Check(netns string, s attach.Spec) error
	Owned(netns, name string) (bool, error)
	OwnedBy(netns string, o attach.Owner) ([]string, error)
}

// host is the node as an ADD's hold on a pod sees it (attach.Open).
func (p *plugin) host() attach.Host {
	return attach.Host{Links: p.links, OwnNetns: p.ownNetns, NetnsMode: p.netnsMode}
}

func newPlugin() *plugin {
	return &plugin{
		raild:      func(socket string, timeout time.Duration) verbs.Raild { return api.NewClient(socket, timeout) },
		links:      attach.Netlink{},
		netnsMode:  rdma.SystemNetnsMode,
		ownNetns:   attach.IsOwnNetns,
		netnsAlive: netnsExists,
		// The runtime keeps a plugin's stderr in its own log.
		logf:   func(format string, args ...any) { fmt.Fprintf(os.Stderr, "rail: "+format+"\n", args...) },
		stdout: os.Stdout,
	}
}

func netnsExists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}
