package inventory

import "github.com/railcni/rail/daemon/linkfilter"

// linkMemory maps the links an event filter follows to what each stands
// for (an RDMA device, an SR-IOV PF): by name from the current snapshot,
// by ifindex from the events (a link renamed since), and remembers each
// link's last event so one that changes nothing asks for no read.
type linkMemory struct {
	byName  map[string]string       // link name -> what it stands for (rebuilt per snapshot)
	byIndex map[int]string          // ifindex -> what it stands for, learned from events
	last    map[int]linkfilter.Seen // ifindex -> the link's last event
}

func newLinkMemory() linkMemory {
	return linkMemory{byIndex: map[int]string{}, last: map[int]linkfilter.Seen{}}
}

// lookup says what the event's link stands for, by name, else by ifindex.
func (m *linkMemory) lookup(ev LinkEvent) (string, bool) {
	v, known := m.byName[ev.Name]
	if !known {
		v, known = m.byIndex[ev.Index]
	}
	return v, known
}

// forget drops what events taught of a link that went.
func (m *linkMemory) forget(index int) {
	delete(m.byIndex, index)
	delete(m.last, index)
}

// lost forgets what every event taught (events were lost).
func (m *linkMemory) lost() {
	clear(m.byIndex)
	clear(m.last)
}

// changed records an event of a link standing for v and says whether its
// name or linkfilter.State differ from its last event's (an event without an
// ifindex has nothing to compare: it always differs).
func (m *linkMemory) changed(ev LinkEvent, v string) bool {
	if ev.Index <= 0 {
		return true
	}
	m.byIndex[ev.Index] = v
	now := linkfilter.Seen{Name: ev.Name, State: ev.State}
	last, seen := m.last[ev.Index]
	m.last[ev.Index] = now
	return !seen || last != now
}

// unseen forgets a link's last event: its events since may have been
// dropped (it was not watched), so the next one is taken as a change.
func (m *linkMemory) unseen(index int) {
	delete(m.last, index)
}
