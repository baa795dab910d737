package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/attach"
	"github.com/railcni/rail/pkg/rdma"
	"github.com/railcni/rail/pkg/verbs"
)

// fakeRaild answers as configured and records what it was asked (one
// goroutine: a plugin process makes its calls in turn).
type fakeRaild struct {
	plan     *api.Plan // Allocate's and Check's answer
	allocErr error
	checkErr error
	relErr   error
	calls    []string
	asked    []api.AllocateRequest // every Allocate request, in order
}

func (f *fakeRaild) record(call string) {
	f.calls = append(f.calls, call)
}

func (f *fakeRaild) Allocate(_ context.Context, req api.AllocateRequest) (*api.Plan, error) {
	f.record("allocate")
	f.asked = append(f.asked, req)
	if f.allocErr != nil {
		return nil, f.allocErr
	}
	return f.plan, nil
}

func (f *fakeRaild) Check(context.Context, api.AttachmentRequest) (*api.Plan, error) {
	f.record("check")
	if f.checkErr != nil {
		return nil, f.checkErr
	}
	if f.plan == nil {
		return nil, &api.Error{Code: api.CodeUnknownContainer, Msg: "no lease"}
	}
	return f.plan, nil
}

func (f *fakeRaild) Release(context.Context, api.AttachmentRequest) error {
	f.record("release")
	return f.relErr
}

func (f *fakeRaild) Status(context.Context, string) (*api.Status, error) {
	f.record("status")
	return &api.Status{Healthy: true}, f.allocErr
}

func (f *fakeRaild) GC(context.Context, api.GCRequest) (*api.GCResult, error) {
	f.record("gc")
	return &api.GCResult{}, nil
}

func (f *fakeRaild) called() string {
	return strings.Join(f.calls, ",")
}

// fakeLinks records the netlink work; failAttach fails that attach (1-based).
type fakeLinks struct {
	attached   map[string]bool // "netns/name"
	failAttach int
	failDetach bool
	log        []string
}

func (f *fakeLinks) Attach(netns string, s attach.Spec) (attach.Result, error) {
	f.log = append(f.log, fmt.Sprintf("attach %s %s %s", netns, s.Name, s.Mode))
	if f.failAttach > 0 && len(f.attachCalls()) == f.failAttach {
		return attach.Result{}, errors.New("netlink: device busy")
	}
	f.attached[netns+"/"+s.Name] = true
	return attach.Result{Name: s.Name, MAC: "02:00:00:00:00:01", MTU: 1500}, nil
}

func (f *fakeLinks) attachCalls() []string {
	var out []string
	for _, l := range f.log {
		if strings.HasPrefix(l, "attach ") {
			out = append(out, l)
		}
	}
	return out
}

func (f *fakeLinks) Detach(netns string, s attach.Spec) error {
	f.log = append(f.log, fmt.Sprintf("detach %s %s %s", netns, s.Name, s.Mode))
	if f.failDetach {
		return errors.New("netlink: operation not permitted")
	}
	delete(f.attached, netns+"/"+s.Name)
	return nil
}

func (f *fakeLinks) Check(netns string, s attach.Spec) error {
	if !f.attached[netns+"/"+s.Name] {
		return errors.New("not attached")
	}
	return nil
}

func (f *fakeLinks) Inspect(_, name string) (attach.Result, error) {
	return attach.Result{Name: name}, nil
}

// testPlugin wires a plugin to fakes. Netns paths: "/ns/pod" is alive,
// "/ns/gone" is not, "/ns/host" is the plugin's own.
func testPlugin(raild *fakeRaild, links *fakeLinks) (*plugin, *bytes.Buffer, *[]string) {
	var out bytes.Buffer
	var logs []string
	if links.attached == nil {
		links.attached = map[string]bool{}
	}
	return &plugin{
		raild:      func(string, time.Duration) verbs.Raild { return raild },
		links:      links,
		netnsMode:  func() (rdma.NetnsMode, error) { return rdma.NetnsShared, nil },
		ownNetns:   func(path string) (bool, error) { return path == "/ns/host", nil },
		netnsAlive: func(path string) bool { return path == "/ns/pod" || path == "/ns/host" },
		logf:       func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) },
		stdout:     &out,
	}, &out, &logs
}

func unreachable() error {
	// What the real client returns when nothing listens.
	_, err := api.NewClient("/nonexistent/raild.sock", time.Second).Status(context.Background(), "")
	return err
}

func (f *fakeLinks) Owned(netns, name string) (bool, error) { return f.attached[netns+"/"+name], nil }
