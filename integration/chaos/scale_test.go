package chaos

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// scale is how hard a run pushes.
type scale struct {
	pods    int // pods whose ADD succeeds during the chaos (at least)
	kills   int // SIGKILLs of raild during the chaos
	cycles  int // ADD/DEL cycles of the soak
	workers int // parallel runtimes' worth of CNI calls
	live    int // pods kept alive at once during the chaos
}

var (
	shortScale = scale{pods: 60, kills: 3, cycles: 200, workers: 4, live: 12}
	longScale  = scale{pods: 1000, kills: 20, cycles: 10000, workers: 6, live: 24}
)

// runScale is the long scale when RAIL_SOAK=1 (make soak), else the short.
func runScale(t testing.TB) scale {
	t.Helper()
	switch v := os.Getenv("RAIL_SOAK"); v {
	case "", "0":
		return shortScale
	case "1":
		return longScale
	default:
		t.Fatalf("RAIL_SOAK=%q: want 1 for the long run (make soak) or unset for the short one", v)
		return scale{}
	}
}

// runSeed is RAIL_CHAOS_SEED, else one from the clock; the test prints it.
func runSeed(t testing.TB) uint64 {
	t.Helper()
	v := os.Getenv("RAIL_CHAOS_SEED")
	if v == "" {
		return uint64(time.Now().UnixNano())
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("RAIL_CHAOS_SEED=%q: want an unsigned integer (the seed a run printed)", v)
	}
	return seed
}
