package main

import (
	"fmt"
	"slices"

	"github.com/railcni/rail/pkg/topology/fakesys"
)

// demoMachines are fakesys's built-in machines with the 4 GPUs the demo's
// two pods need.
func demoMachines() []string {
	var out []string
	for _, name := range fakesys.Names() {
		if gpus, _ := gpuCount(name); gpus >= 4 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// gpuCount counts a built-in machine's GPUs from its description.
func gpuCount(name string) (int, bool) {
	host, ok := fakesys.Machine(name)
	if !ok {
		return 0, false
	}
	n := 0
	var walk func([]fakesys.Slot)
	walk = func(slots []fakesys.Slot) {
		for _, s := range slots {
			if s.GPU != nil {
				n++
			}
			walk(s.Switch)
		}
	}
	for _, r := range host.Roots {
		walk(r.Ports)
	}
	return n, true
}

// demoPods are the prefill pod (GPUs 0 and 1) and the decode pod (the
// first two GPUs of the second half: 4 and 5 on 8 GPUs, 2 and 3 on 4).
func demoPods(machine string) ([]*demoPod, error) {
	n, ok := gpuCount(machine)
	if !ok || n < 4 {
		return nil, fmt.Errorf("machine %q: the demo needs a built-in machine with at least 4 GPUs", machine)
	}
	return []*demoPod{{name: "prefill", gpus: []int{0, 1}}, {name: "decode", gpus: []int{n / 2, n/2 + 1}}}, nil
}
