package readiness

import (
	"fmt"

	"github.com/railcni/rail/pkg/api"
)

// Condition reasons, one per way a check fails; ReasonReady when all pass.
const (
	ReasonReady          = "RDMAReady"
	ReasonNetnsGone      = "NetnsGone"
	ReasonIfaceMissing   = "InterfaceMissing"
	ReasonIfaceDown      = "InterfaceDown"
	ReasonAddressMissing = "AddressMissing"
	ReasonPortNotActive  = "PortNotActive"
	ReasonWrongLinkLayer = "WrongLinkLayer"
	ReasonGIDMissing     = "GIDMissing"
	ReasonRDMANotInPod   = "RDMADeviceNotInPod"
	ReasonDevicesMissing = "DeviceNodesMissing"
	ReasonMemlockTooLow  = "MemlockTooLow"
	ReasonNoRail         = "NoRailInterface"
)

// Result is every check of one pod.
type Result struct {
	Checks []api.ReadinessCheck
}

// Ready is true when no check failed.
func (r Result) Ready() bool {
	_, failed := r.firstFailure()
	return failed == 0
}

func (r Result) firstFailure() (api.ReadinessCheck, int) {
	var first api.ReadinessCheck
	failed := 0
	for _, c := range r.Checks {
		if c.Status == api.CheckFail {
			if failed == 0 {
				first = c
			}
			failed++
		}
	}
	return first, failed
}

// Summary is the condition's reason and message: the first failing check
// and its fix, how many more failed, and where to look.
func (r Result) Summary(pod string) (reason, message string) {
	first, failed := r.firstFailure()
	if failed == 0 {
		return ReasonReady, fmt.Sprintf("%d check(s) passed: interfaces, ports, GIDs, device nodes and memlock are as raild arranged", r.passed())
	}
	message = first.Subject + ": " + first.Message
	if first.Fix != "" {
		message += "; fix: " + first.Fix
	}
	if failed > 1 {
		message += fmt.Sprintf(" (and %d more failing check(s))", failed-1)
	}
	return first.Reason, message + "; see `raild doctor --pod " + pod + "` on the node"
}

func (r Result) passed() int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == api.CheckPass {
			n++
		}
	}
	return n
}

// check builders, so every check names its subject the same way.
func pass(name, subject, msg string) api.ReadinessCheck {
	return api.ReadinessCheck{Name: name, Subject: subject, Status: api.CheckPass, Message: msg}
}

func fail(name, subject, reason, msg, fix string) api.ReadinessCheck {
	return api.ReadinessCheck{Name: name, Subject: subject, Status: api.CheckFail, Reason: reason, Message: msg, Fix: fix}
}

func skip(name, subject, msg string) api.ReadinessCheck {
	return api.ReadinessCheck{Name: name, Subject: subject, Status: api.CheckSkip, Message: msg}
}
