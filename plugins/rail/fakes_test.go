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

// fakeLinks records the netlink work; failAttach fails that attach
// (1-based, counted over every AttachAll), changed marks interfaces the
// pod has but not as rail left them ("netns/name"), as pkg/attach reports
// them. AttachAll is one transaction, as pkg/attach's: on failure it takes
// back what it created itself.
type fakeLinks struct {
	attached   map[string]bool // "netns/name"
	changed    map[string]bool
	owners     map[string][]string // "sandbox/attachment/network": interface names whose alias names it
	failAttach int
	undoFails  bool // AttachAll's undo fails: what it created stays
	failDetach bool
	log        []string
	trace      *[]string // where LockPod records lock and unlock: raild's calls, to show their order
}

func (f *fakeLinks) LockPod(string) (func(), error) {
	*f.trace = append(*f.trace, "lock")
	return func() { *f.trace = append(*f.trace, "unlock") }, nil
}

func (f *fakeLinks) AttachAll(netns string, specs []attach.Spec) (_ []attach.Attached, retErr error) {
	var made []string
	defer func() {
		if retErr != nil && f.undoFails && len(made) > 0 {
			retErr = fmt.Errorf("%w\n%w: undo interface %s: device busy", retErr, attach.ErrUndoIncomplete, made[0])
			return
		}
		if retErr != nil {
			for _, key := range made {
				delete(f.attached, key)
			}
		}
	}()
	var out []attach.Attached
	for _, s := range specs {
		key := netns + "/" + s.Name
		f.log = append(f.log, fmt.Sprintf("attach %s %s %s", netns, s.Name, s.Mode))
		switch {
		case f.changed[key]:
			return nil, fmt.Errorf("attach %s: already attached but not as requested (interface %s is down): detach it first", s.Name, s.Name)
		case f.attached[key]:
			out = append(out, attach.Attached{Result: attach.Result{Name: s.Name, MAC: "02:00:00:00:00:01", MTU: 1500}})
			continue
		case f.failAttach > 0 && len(f.attachCalls()) == f.failAttach:
			return nil, errors.New("netlink: device busy")
		}
		f.attached[key] = true
		made = append(made, key)
		out = append(out, attach.Attached{Result: attach.Result{Name: s.Name, MAC: "02:00:00:00:00:01", MTU: 1500}, Created: true})
	}
	return out, nil
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

// testPlugin wires a plugin to fakes. Netns paths: "/ns/pod" is alive,
// "/ns/gone" is not, "/ns/host" is the plugin's own.
func testPlugin(raild *fakeRaild, links *fakeLinks) (*plugin, *bytes.Buffer, *[]string) {
	var out bytes.Buffer
	var logs []string
	if links.attached == nil {
		links.attached = map[string]bool{}
	}
	links.trace = &raild.calls
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

// OwnedBy: the attached interfaces of netns that f.owners lists for the
// attachment ("sandbox/attachment/network").
func (f *fakeLinks) OwnedBy(netns string, o attach.Owner) ([]string, error) {
	var out []string
	for _, name := range f.owners[o.Sandbox+"/"+o.CNIIfName+"/"+o.Network] {
		if f.attached[netns+"/"+name] {
			out = append(out, name)
		}
	}
	return out, nil
}
