package attach

import (
	"errors"
	"fmt"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// session holds the two network namespaces of one call and a netlink
// handle in each. The host netns is the calling thread's; callers keep the
// OS thread locked for the session's lifetime.
type session struct {
	podPath string
	host    ns.NetNS
	pod     ns.NetNS // nil when the pod netns is gone (Detach only)
	hostNL  netlinksafe.Handle
	podNL   netlinksafe.Handle
	pfIndex map[string]int // PFs looked up in this session, by name (netlinkPF)
}

// errPodNetnsGone marks a pod netns path that no longer exists or is no
// longer a network namespace.
var errPodNetnsGone = errors.New("pod netns is gone")

// openSession opens the caller's netns and the pod netns at podPath with a
// netlink handle in each. When the pod netns does not exist the error wraps
// errPodNetnsGone.
func openSession(podPath string) (_ *session, retErr error) {
	s := &session{podPath: podPath}
	defer func() {
		if retErr != nil {
			s.close()
		}
	}()
	host, err := ns.GetCurrentNS()
	if err != nil {
		return nil, fmt.Errorf("open host netns: %w", err)
	}
	s.host = host
	if s.hostNL, err = netlinksafe.NewHandleAt(netns.None(), unix.NETLINK_ROUTE); err != nil {
		return nil, fmt.Errorf("open netlink in host netns: %w", err)
	}
	pod, err := ns.GetNS(podPath)
	if err != nil {
		var notExist ns.NSPathNotExistErr
		var notNS ns.NSPathNotNSErr
		if errors.As(err, &notExist) || errors.As(err, &notNS) {
			return nil, fmt.Errorf("%w: %s: %v", errPodNetnsGone, podPath, err)
		}
		return nil, fmt.Errorf("open pod netns %s: %w", podPath, err)
	}
	s.pod = pod
	same, err := sameNetns(int(host.Fd()), int(pod.Fd()))
	if err != nil {
		return nil, err
	}
	if same {
		return nil, fmt.Errorf("%w: %s", ErrHostNetns, podPath)
	}
	if s.podNL, err = netlinksafe.NewHandleAt(s.podHandle(), unix.NETLINK_ROUTE); err != nil {
		return nil, fmt.Errorf("open netlink in pod netns %s: %w", podPath, err)
	}
	return s, nil
}

// openHostSession opens only the caller's netns, for a pod netns that is gone.
func openHostSession(podPath string) (*session, error) {
	s := &session{podPath: podPath}
	host, err := ns.GetCurrentNS()
	if err != nil {
		return nil, fmt.Errorf("open host netns: %w", err)
	}
	s.host = host
	if s.hostNL, err = netlinksafe.NewHandleAt(netns.None(), unix.NETLINK_ROUTE); err != nil {
		s.close()
		return nil, fmt.Errorf("open netlink in host netns: %w", err)
	}
	return s, nil
}

func (s *session) podHandle() netns.NsHandle { return netns.NsHandle(int(s.pod.Fd())) }

func (s *session) close() {
	s.podNL.Close()
	s.hostNL.Close()
	if s.pod != nil {
		_ = s.pod.Close()
	}
	if s.host != nil {
		_ = s.host.Close()
	}
}
