package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/railcni/rail/integration/harness"
)

// settle bounds the wait for the kernel's asynchronous work after DEL.
const settle = 3 * time.Second

// printLeases shows `raild leases` as an operator would run it.
func printLeases(out io.Writer, node *harness.Node) error {
	cmd := exec.Command(node.Bins.Rail+"/raild", "leases", "--socket", node.Raild.Socket)
	text, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("raild leases: %w: %s", err, text)
	}
	fmt.Fprintf(out, "\n$ raild leases\n")
	for _, line := range strings.Split(strings.TrimRight(string(text), "\n"), "\n") {
		fmt.Fprintf(out, "  %s\n", line)
	}
	return nil
}

// waitForInspection keeps everything up until Ctrl-C and says how to look.
func waitForInspection(ctx context.Context, out io.Writer, node *harness.Node, pods []*demoPod) {
	fmt.Fprintf(out, "\n--keep: everything stays up until Ctrl-C. Look around with:\n")
	for _, p := range pods {
		fmt.Fprintf(out, "  ip netns exec %s ip addr      # pod %s\n", p.pod.Netns.Name, p.name)
	}
	fmt.Fprintf(out, "  ip netns exec %s ip link      # the node (stand-in NICs)\n", node.Netns.Name)
	fmt.Fprintf(out, "  %s/raild leases --socket %s\n", node.Bins.Rail, node.Raild.Socket)
	fmt.Fprintf(out, "  %s/raild topo --root %s\n", node.Bins.Rail, node.Machine.Root)
	<-ctx.Done()
	fmt.Fprintln(out)
}

// teardown runs DEL for each pod, removes their netns, checks that the node
// is as before and removes the node.
func teardown(out io.Writer, node *harness.Node, network *harness.Network, pods []*demoPod, before harness.Snapshot) error {
	fmt.Fprintf(out, "\nteardown\n")
	var errs []error
	for _, p := range pods {
		if p.pod == nil {
			continue
		}
		if err := network.Del(context.Background(), p.pod); err != nil {
			errs = append(errs, fmt.Errorf("CNI DEL of %s: %w", p.name, err))
		}
		errs = append(errs, node.DeletePodNetns(p.pod))
	}
	if err := errors.Join(errs...); err != nil {
		return errors.Join(err, node.Close())
	}
	fmt.Fprintf(out, "  CNI DEL  prefill, decode: ok; pod netns deleted\n")
	problems := verify(out, node, before)
	closeErr := node.Close()
	if closeErr == nil {
		fmt.Fprintf(out, "  removed  node and fabric netns, raild, kubelet stand-in, %s\n", node.Dir)
	}
	if len(problems) > 0 {
		return errors.Join(fmt.Errorf("something was left behind:\n  %s", strings.Join(problems, "\n  ")), closeErr)
	}
	return closeErr
}

// verify prints and returns what is not as it was.
func verify(out io.Writer, node *harness.Node, before harness.Snapshot) []string {
	var problems []string
	nics := node.Fabric.NICs()
	missing := node.Fabric.Present()
	fmt.Fprintf(out, "  NICs     %d/%d back in the node netns under their own name, MTU and state\n", len(nics)-len(missing), len(nics))
	problems = append(problems, missing...)
	leases, err := node.Raild.Leases()
	if err != nil {
		problems = append(problems, err.Error())
	}
	fmt.Fprintf(out, "  leases   %d held by raild\n", len(leases))
	for _, l := range leases {
		problems = append(problems, fmt.Sprintf("lease %s %s %s", l.PodName, l.IfName, l.Address))
	}
	left, err := node.PodNetnsLeft()
	if err != nil {
		problems = append(problems, err.Error())
	}
	problems = append(problems, left...)
	diff, err := harness.WaitSame(node.Netns, before, settle)
	if err != nil {
		problems = append(problems, err.Error())
	}
	problems = append(problems, diff...)
	same := "as before (links, addresses, routes, rules)"
	if len(diff) > 0 {
		same = fmt.Sprintf("changed in %d place(s)", len(diff))
	}
	fmt.Fprintf(out, "  netns    %d pod netns left; node netns %s\n", len(left), same)
	return problems
}
