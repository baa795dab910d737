package attach

import (
	"slices"
	"strings"
	"testing"
)

// TestOwnedBy: the interfaces an attachment's ADD made are found by their
// alias alone, by the name given at attach time, even after a rename in
// the pod; another attachment's, another sandbox's, a foreign interface
// and one without an owner are not.
func TestOwnedBy(t *testing.T) {
	e := newTestEnv(t)
	mine := Owner{Sandbox: "sb1", CNIIfName: "eth0", Network: "railnet", Pool: "p"}
	other := func(change func(*Owner)) Owner { o := mine; change(&o); return o }
	specs := []Spec{
		{Mode: ModeMove, Parent: e.addNIC(1500, true), Name: "rail0", Owner: mine},
		{Mode: ModeMacvlan, Parent: e.addNIC(1500, true), Name: "rail1", Owner: mine},
		{Mode: ModeMacvlan, Parent: e.addNIC(1500, true), Name: "net1", Owner: other(func(o *Owner) { o.CNIIfName = "net1" })},
		{Mode: ModeMacvlan, Parent: e.addNIC(1500, true), Name: "rail2", Owner: other(func(o *Owner) { o.Sandbox = "sb2" })},
		{Mode: ModeMacvlan, Parent: e.addNIC(1500, true), Name: "rail3", Owner: other(func(o *Owner) { o.Network = "other" })},
		{Mode: ModeMacvlan, Parent: e.addNIC(1500, true), Name: "rail4"},
	}
	for _, s := range specs {
		if _, err := e.attach(s); err != nil {
			t.Fatalf("attach %s: %v", s.Name, err)
		}
	}
	e.addPodVeth("rail5")
	h := handle(t, e.pod)
	l := mustLinkIn(t, e.pod, "rail1")
	must(t, h.LinkSetDown(l))
	must(t, h.LinkSetName(l, "renamed1"))
	var got []string
	must(t, e.inHost(func() error {
		var err error
		got, err = OwnedBy(e.pod.Path(), mine)
		return err
	}))
	slices.Sort(got)
	if want := []string{"rail0", "rail1"}; !slices.Equal(got, want) {
		t.Errorf("OwnedBy = %v, want %v", got, want)
	}
	if err := e.inHost(func() error { _, err := OwnedBy(e.pod.Path(), Owner{Sandbox: "sb1"}); return err }); err == nil ||
		!strings.Contains(err.Error(), "must all be set") {
		t.Errorf("OwnedBy without attachment and network = %v, want it refused", err)
	}
	pod := e.pod.Path()
	removeTestNetns(e.pod)
	if err := e.inHost(func() error {
		names, err := OwnedBy(pod, mine)
		if err == nil && len(names) > 0 {
			t.Errorf("OwnedBy in a gone netns = %v, want none", names)
		}
		return err
	}); err != nil {
		t.Errorf("OwnedBy in a gone netns: %v", err)
	}
}
