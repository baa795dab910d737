package topology

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseDevNumbers(t *testing.T) {
	tests := []struct {
		in         string
		maj, minor uint32
		ok         bool
	}{
		{"231:192\n", 231, 192, true},
		{"231:255", 231, 255, true},
		{"231:256", 231, 256, true},
		{"511:1048575", 511, 1048575, true},
		{"4095:0", 4095, 0, true},
		{"4096:0", 0, 0, false},
		{"10:1048576", 0, 0, false},
		{"231-192", 0, 0, false},
		{"231:", 0, 0, false},
		{"x:1", 0, 0, false},
		{"-1:1", 0, 0, false},
	}
	for _, tc := range tests {
		maj, minor, err := ParseDevNumbers(tc.in)
		if (err == nil) != tc.ok || maj != tc.maj || minor != tc.minor {
			t.Errorf("ParseDevNumbers(%q) = %d:%d %v, want %d:%d ok=%v", tc.in, maj, minor, err, tc.maj, tc.minor, tc.ok)
		}
	}
}

func TestRdevMatchesMkdev(t *testing.T) {
	for _, nums := range [][2]uint32{{231, 192}, {231, 255}, {231, 256}, {231, 300}, {10, 58}, {511, 1048575}, {4095, 65536}} {
		c := CharDev{Major: nums[0], Minor: nums[1]}
		if got, want := c.Rdev(), unix.Mkdev(nums[0], nums[1]); got != want {
			t.Errorf("Rdev(%d:%d) = %#x, want %#x", nums[0], nums[1], got, want)
		}
		if unix.Major(c.Rdev()) != nums[0] || unix.Minor(c.Rdev()) != nums[1] {
			t.Errorf("Rdev(%d:%d) does not decode back", nums[0], nums[1])
		}
	}
}

func TestParseUevent(t *testing.T) {
	tests := []struct {
		text, devname string
		maj, minor    uint32
		ok            bool
	}{
		{"MAJOR=231\nMINOR=300\nDEVNAME=infiniband/uverbs0\n", "infiniband/uverbs0", 231, 300, true},
		{"DEVNAME=infiniband/umad0\nMINOR=0\nMAJOR=231", "infiniband/umad0", 231, 0, true},
		{"MAJOR=231\n", "", 0, 0, false},
		{"MAJOR=a\nMINOR=1", "", 0, 0, false},
	}
	for _, tc := range tests {
		maj, minor, devname, err := parseUevent(tc.text)
		if (err == nil) != tc.ok || (tc.ok && (maj != tc.maj || minor != tc.minor || devname != tc.devname)) {
			t.Errorf("parseUevent(%q) = %d:%d %q %v", tc.text, maj, minor, devname, err)
		}
	}
}
