package attach

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/railcni/rail/pkg/api"
	"github.com/railcni/rail/pkg/rdma"
)

// podLinks records what a Pod asks of its links.
type podLinks struct {
	lockErr   error
	detachErr map[string]error // by interface name
	log       []string
}

func (l *podLinks) LockPod(netns string) (func(), error) {
	if l.lockErr != nil {
		return nil, l.lockErr
	}
	l.log = append(l.log, "lock "+netns)
	return func() { l.log = append(l.log, "unlock "+netns) }, nil
}

func (l *podLinks) AttachAll(netns string, specs []Spec) ([]Attached, error) {
	for _, s := range specs {
		l.log = append(l.log, "attach "+netns+" "+s.Name)
	}
	return make([]Attached, len(specs)), nil
}

func (l *podLinks) Detach(netns string, s Spec) error {
	l.log = append(l.log, "detach "+netns+" "+s.Name)
	return l.detachErr[s.Name]
}

// TestOpenRefusesBeforeAnything: each refusal is its CNI error, and nothing
// is locked or attached; an accepted netns is locked until Close.
func TestOpenRefusesBeforeAnything(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	const podNetns = "/proc/self/ns/net" // a network namespace no test owns; stubs judge it
	tests := []struct {
		name     string
		netns    string
		mode     api.Mode
		own      bool
		ownErr   error
		rdmaMode rdma.NetnsMode
		modeErr  error
		lockErr  error
		wantCode uint
		wantMsg  string
	}{
		{name: "accepted", netns: podNetns, mode: api.ModeMacvlan, rdmaMode: rdma.NetnsShared},
		{name: "empty", netns: "", mode: api.ModeMacvlan, wantCode: types.ErrInvalidEnvironmentVariables, wantMsg: "CNI_NETNS is empty"},
		{name: "a FIFO, never opened", netns: fifo, mode: api.ModeMacvlan, wantCode: types.ErrInvalidNetNS, wantMsg: "not a network namespace"},
		{name: "the plugin's own", netns: podNetns, mode: api.ModeMacvlan, own: true,
			wantCode: types.ErrInvalidEnvironmentVariables, wantMsg: "host's own network namespace"},
		{name: "own netns unreadable", netns: podNetns, mode: api.ModeMacvlan, ownErr: errors.New("permission denied"),
			wantCode: types.ErrInvalidEnvironmentVariables, wantMsg: "cannot read CNI_NETNS"},
		{name: "RDMA netns mode unreadable", netns: podNetns, mode: api.ModeMacvlan, modeErr: errors.New("netlink: bad message"),
			wantCode: types.ErrInternal, wantMsg: "cannot read the RDMA netns mode"},
		{name: "macvlan in exclusive mode", netns: podNetns, mode: api.ModeMacvlan, rdmaMode: rdma.NetnsExclusive,
			wantCode: types.ErrInvalidNetworkConfig, wantMsg: `invalid netconf field "mode"`},
		{name: "move in exclusive mode", netns: podNetns, mode: api.ModeMove, rdmaMode: rdma.NetnsExclusive},
		{name: "lock refused", netns: podNetns, mode: api.ModeMove, rdmaMode: rdma.NetnsShared, lockErr: errors.New("no such file"),
			wantCode: types.ErrInternal, wantMsg: "cannot lock the pod's netns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := &podLinks{lockErr: tt.lockErr}
			host := Host{Links: links,
				OwnNetns:  func(string) (bool, error) { return tt.own, tt.ownErr },
				NetnsMode: func() (rdma.NetnsMode, error) { return tt.rdmaMode, tt.modeErr }}
			pod, err := Open(tt.netns, tt.mode, host)
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if pod.RDMANetns() != tt.rdmaMode {
					t.Errorf("RDMANetns %q, want %q", pod.RDMANetns(), tt.rdmaMode)
				}
				pod.Close()
				if want := []string{"lock " + tt.netns, "unlock " + tt.netns}; !slices.Equal(links.log, want) {
					t.Errorf("links did %q, want %q", links.log, want)
				}
				return
			}
			var cniErr *types.Error
			if !errors.As(err, &cniErr) || cniErr.Code != tt.wantCode || !strings.Contains(cniErr.Msg, tt.wantMsg) {
				t.Fatalf("Open: %v, want CNI code %d with %q", err, tt.wantCode, tt.wantMsg)
			}
			if pod != nil || len(links.log) > 0 {
				t.Errorf("refused, yet links did %q", links.log)
			}
		})
	}
}

// TestPodRollback: what the hold created is detached newest first, every
// failure returned, none stopping the others.
func TestPodRollback(t *testing.T) {
	tests := []struct {
		name      string
		created   []string
		detachErr map[string]error
		wantErrs  []string
	}{
		{name: "nothing created"},
		{name: "newest first", created: []string{"rail0", "rail1", "rail2"}},
		{name: "failures joined, the rest still detached", created: []string{"rail0", "rail1", "rail2"},
			detachErr: map[string]error{"rail1": errors.New("rail1 busy"), "rail0": errors.New("rail0 busy")},
			wantErrs:  []string{"rail1 busy", "rail0 busy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := &podLinks{detachErr: tt.detachErr}
			pod, err := Open("/proc/self/ns/net", api.ModeMove, Host{Links: links,
				OwnNetns:  func(string) (bool, error) { return false, nil },
				NetnsMode: func() (rdma.NetnsMode, error) { return rdma.NetnsShared, nil }})
			if err != nil {
				t.Fatal(err)
			}
			defer pod.Close()
			specs := make([]Spec, len(tt.created))
			for i, name := range tt.created {
				specs[i] = Spec{Name: name}
			}
			err = pod.Rollback(specs)
			var want []string
			for i := len(tt.created) - 1; i >= 0; i-- {
				want = append(want, fmt.Sprintf("detach /proc/self/ns/net %s", tt.created[i]))
			}
			if got := links.log[1:]; !slices.Equal(got, want) {
				t.Errorf("detached %q, want %q", got, want)
			}
			for _, w := range tt.wantErrs {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Rollback: %v, want it to name %q", err, w)
				}
			}
			if len(tt.wantErrs) == 0 && err != nil {
				t.Errorf("Rollback: %v", err)
			}
		})
	}
}
