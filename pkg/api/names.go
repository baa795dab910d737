package api

import "regexp"

// DefaultIfPrefix names chained rail interfaces rail0, rail1, ...
const DefaultIfPrefix = "rail"

// How chained rail interfaces are numbered (netconf ifNames).
const (
	// IfNamesOrder numbers them in the order the pod's GPUs chose the NICs.
	IfNamesOrder = "order"
	// IfNamesRail numbers each by its NIC's rail index.
	IfNamesRail = "rail"
)

var (
	ifPrefixRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,10}$`)
	poolNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)
)

// ValidIfPrefix reports whether p can prefix pod interface names: a letter,
// then letters, digits, '_' or '-', at most 11 bytes so that p plus an
// index fits the kernel's 15.
func ValidIfPrefix(p string) bool { return ifPrefixRE.MatchString(p) }

// ValidPoolName reports whether name is a pool name: letters, digits, '.',
// '_' and '-', at most 63 bytes, not starting with a punctuation mark.
func ValidPoolName(name string) bool { return poolNameRE.MatchString(name) }
