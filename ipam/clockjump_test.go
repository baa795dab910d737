package ipam

import (
	"testing"
	"time"
)

// TestClockJumpsAgainstCooldowns: with the wall clock set back (NTP, an
// admin, a VM restored), a released address cools for at most the
// cooldown from when the jump is seen, never the cooldown plus the jump;
// never less than the cooldown either. Forward jumps are time passing.
func TestClockJumpsAgainstCooldowns(t *testing.T) {
	const cooldown = time.Hour
	tests := []struct {
		name    string
		restart bool          // raild restarts between the release and the jump
		jump    time.Duration // applied after the release
	}{
		{name: "back 6h while running", jump: -6 * time.Hour},
		{name: "back 6h across a restart", jump: -6 * time.Hour, restart: true},
		{name: "back 1s while running", jump: -time.Second},
		{name: "forward 10m while running", jump: 10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			pools := mustPools(t, []PoolConfig{{Name: "p", Subnet: "10.0.0.0/29"}}, "n1")
			opt := Options{Cooldown: cooldown, Now: clock.Now}
			a, path := openTest(t, pools, opt)
			if _, err := a.Allocate(request("sb1", "rail0", "p")); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Release("sb1", "eth0", "railnet"); err != nil {
				t.Fatal(err)
			}
			clock.Advance(tt.jump)
			if tt.restart {
				a.Close()
				a = reopen(t, path, pools, opt)
			}
			defer a.Close()
			cooling := func() uint64 { return a.Stats()[0].Cooling }
			if got := cooling(); got != 1 {
				t.Fatalf("cooling %d right after the jump; want 1 (never less than the cooldown)", got)
			}
			rest := cooldown - max(tt.jump, 0)
			clock.Advance(rest - time.Second)
			if got := cooling(); got != 1 {
				t.Fatalf("cooling %d a second before the cooldown ends; want 1", got)
			}
			clock.Advance(time.Second)
			if got := cooling(); got != 0 {
				t.Fatalf("cooling %d a cooldown after the jump was seen; want 0 (the jump must not lengthen it)", got)
			}
		})
	}
}
