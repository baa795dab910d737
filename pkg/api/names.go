package api

// DefaultIfPrefix names chained rail interfaces rail0, rail1, ...
const DefaultIfPrefix = "rail"

// How chained rail interfaces are numbered (netconf ifNames).
const (
	// IfNamesOrder numbers them in the order the pod's GPUs chose the NICs.
	IfNamesOrder = "order"
	// IfNamesRail numbers each by its NIC's rail index.
	IfNamesRail = "rail"
)

// ValidIfPrefix reports whether p can prefix pod interface names: a letter,
// then letters, digits, '_' or '-', at most 11 bytes so that p plus an
// index fits the kernel's 15.
func ValidIfPrefix(p string) bool {
	return validName(p, 11, isLetter, func(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == '-' })
}

// ValidPoolName reports whether name is a pool name: letters, digits, '.',
// '_' and '-', at most 63 bytes, not starting with a punctuation mark.
func ValidPoolName(name string) bool {
	return validName(name, 63, func(c byte) bool { return isLetter(c) || isDigit(c) },
		func(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == '-' || c == '.' })
}

// validName: 1 to most bytes, the first one first allows, every other
// one rest allows. (Hand-written rather than regular expressions: the
// plugin compiled those at every start, a third of its packages' init
// time.)
func validName(s string, most int, first, rest func(byte) bool) bool {
	if len(s) == 0 || len(s) > most || !first(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !rest(s[i]) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
