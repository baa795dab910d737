package netnstest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
)

// RequireRoot skips the test unless it runs as root; why says what the
// test does that needs root ("creates network namespaces").
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: " + why + " (run as root; make test does)")
	}
}

// UniqueName is prefix plus random hex, cut to a netdev name's 15 bytes:
// a link or netns name no other test run uses.
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random name: %v", err)
	}
	name := prefix + hex.EncodeToString(b)
	if len(name) > 15 {
		name = name[:15]
	}
	return name
}
