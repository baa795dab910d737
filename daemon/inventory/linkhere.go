package inventory

import "github.com/vishvananda/netlink"

// linkInNetns says whether a link of that name is in raild's netns now
// (one RTM_GETLINK); an error reads as not here.
func linkInNetns(name string) bool {
	_, err := netlink.LinkByName(name)
	return err == nil
}
