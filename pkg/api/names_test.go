package api

import (
	"regexp"
	"strings"
	"testing"
)

// The rules ValidIfPrefix and ValidPoolName check, as the regular
// expressions they were written with.
var (
	ifPrefixRule = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,10}$`)
	poolNameRule = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)
)

func TestValidNames(t *testing.T) {
	tests := []struct {
		in           string
		prefix, pool bool
	}{
		{in: "", prefix: false, pool: false},
		{in: "rail", prefix: true, pool: true},
		{in: "r", prefix: true, pool: true},
		{in: "9rail", prefix: false, pool: true},
		{in: "_rail", prefix: false, pool: false},
		{in: "-rail", prefix: false, pool: false},
		{in: ".rail", prefix: false, pool: false},
		{in: "ra-il_9", prefix: true, pool: true},
		{in: "ra.il", prefix: false, pool: true},
		{in: "abcdefghijk", prefix: true, pool: true},   // 11 bytes
		{in: "abcdefghijkl", prefix: false, pool: true}, // 12
		{in: strings.Repeat("a", 63), prefix: false, pool: true},
		{in: strings.Repeat("a", 64), prefix: false, pool: false},
		{in: "rail 0", prefix: false, pool: false},
		{in: "rail/0", prefix: false, pool: false},
		{in: "raïl", prefix: false, pool: false},
		{in: "rail\n", prefix: false, pool: false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := ValidIfPrefix(tt.in); got != tt.prefix || got != ifPrefixRule.MatchString(tt.in) {
				t.Errorf("ValidIfPrefix(%q) = %v, want %v", tt.in, got, tt.prefix)
			}
			if got := ValidPoolName(tt.in); got != tt.pool || got != poolNameRule.MatchString(tt.in) {
				t.Errorf("ValidPoolName(%q) = %v, want %v", tt.in, got, tt.pool)
			}
		})
	}
}

// FuzzValidNames holds the hand-written checks to the rules' regular
// expressions.
func FuzzValidNames(f *testing.F) {
	for _, s := range []string{"rail", "9a", "a.b", "a-b_c", "", strings.Repeat("z", 63)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidIfPrefix(s), ifPrefixRule.MatchString(s); got != want {
			t.Errorf("ValidIfPrefix(%q) = %v, the rule says %v", s, got, want)
		}
		if got, want := ValidPoolName(s), poolNameRule.MatchString(s); got != want {
			t.Errorf("ValidPoolName(%q) = %v, the rule says %v", s, got, want)
		}
	})
}
