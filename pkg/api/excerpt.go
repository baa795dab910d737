package api

import (
	"fmt"
	"unicode/utf8"
)

// Bounds on text that may carry what a user wrote (annotations, cni-args,
// netconf values): errors quote an excerpt, never the whole value.
const (
	MaxMsg     = 512
	MaxDetails = 2048
)

// Excerpt returns s when it is at most max bytes, else its first max bytes
// (cut at a rune boundary) followed by how long s was.
func Excerpt(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s[:cut], len(s))
}

// Bounded returns e with its message and details cut to MaxMsg and
// MaxDetails, so that no answer, CNI error or log line carries a whole
// oversized value.
func (e *Error) Bounded() *Error {
	if len(e.Msg) <= MaxMsg && len(e.Details) <= MaxDetails {
		return e
	}
	return &Error{Code: e.Code, Msg: Excerpt(e.Msg, MaxMsg), Details: Excerpt(e.Details, MaxDetails)}
}
