package attach

import (
	"errors"
	"fmt"
	"runtime"
)

// OwnedBy lists the interfaces in the pod whose rail alias records o's
// sandbox, attachment and network (all three must be set), by the pod name
// they were given at attach time, which is what Detach takes: what an ADD
// of that attachment made, found without a lease or a cached result. A pod
// netns that is gone has none.
func OwnedBy(podNetns string, o Owner) ([]string, error) {
	if o.Sandbox == "" || o.CNIIfName == "" || o.Network == "" {
		return nil, fmt.Errorf("owned by: sandbox, attachment and network must all be set, got %+v", o)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sess, err := openSession(podNetns)
	if errors.Is(err, errPodNetnsGone) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("owned by %s/%s: %w", o.Sandbox, o.CNIIfName, err)
	}
	defer sess.close()
	links, err := sess.podNL.LinkList()
	if err != nil {
		return nil, fmt.Errorf("owned by %s/%s: list pod links: %w", o.Sandbox, o.CNIIfName, err)
	}
	var names []string
	for _, l := range links {
		rec, ok := parseAlias(l.Attrs().Alias)
		if ok && rec.Owner.Sandbox == o.Sandbox && rec.Owner.CNIIfName == o.CNIIfName && rec.Owner.Network == o.Network {
			names = append(names, rec.Name)
		}
	}
	return names, nil
}
