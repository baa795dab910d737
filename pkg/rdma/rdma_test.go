package rdma

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/railcni/rail/pkg/api"
)

func TestModeRequirement(t *testing.T) {
	tests := []struct {
		attach  string
		mode    NetnsMode
		wantErr []string // substrings; nil means no error
	}{
		{"move", NetnsShared, nil},
		{"move", NetnsExclusive, nil},
		{"move", NetnsNone, nil},
		{"macvlan", NetnsShared, nil},
		{"ipoib", NetnsShared, nil},
		{"macvlan", NetnsNone, nil},
		{"macvlan", NetnsExclusive, []string{`"macvlan"`, `"shared"`, `"exclusive" mode`, "rdma system set netns shared", "netns_mode=1"}},
		{"ipoib", NetnsExclusive, []string{`"ipoib"`, `"shared"`, "ib_core", `attach mode "move"`}},
		{"sriov", NetnsShared, []string{`unknown attach mode "sriov"`}},
		{"move", NetnsMode("weird"), []string{`unknown rdma netns mode "weird"`}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.attach, tt.mode), func(t *testing.T) {
			err := ModeRequirement(api.Mode(tt.attach), tt.mode)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("ModeRequirement(%q, %q) = %v, want nil", tt.attach, tt.mode, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ModeRequirement(%q, %q) = nil, want an error", tt.attach, tt.mode)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestParseNetnsMode(t *testing.T) {
	tests := []struct {
		in      string
		want    NetnsMode
		wantErr bool
	}{
		{"shared", NetnsShared, false},
		{"exclusive", NetnsExclusive, false},
		{"", NetnsNone, false},
		{"unknown", NetnsNone, true},
		{"Shared", NetnsNone, true},
	}
	for _, tt := range tests {
		got, err := ParseNetnsMode(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseNetnsMode(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestErrorClassification(t *testing.T) {
	wrap := func(e error) error { return fmt.Errorf("socket: %w", e) }
	tests := []struct {
		err           error
		noSubsystem   bool
		unknownToKern bool
	}{
		{wrap(unix.EPROTONOSUPPORT), true, false},
		{wrap(unix.EAFNOSUPPORT), true, false},
		{wrap(unix.EOPNOTSUPP), false, true},
		{unix.EINVAL, false, true},
		{wrap(unix.EPERM), false, false},
		{errors.New("other"), false, false},
	}
	for _, tt := range tests {
		if got := noRDMASubsystem(tt.err); got != tt.noSubsystem {
			t.Errorf("noRDMASubsystem(%v) = %v, want %v", tt.err, got, tt.noSubsystem)
		}
		if got := queryUnknownToKernel(tt.err); got != tt.unknownToKern {
			t.Errorf("queryUnknownToKernel(%v) = %v, want %v", tt.err, got, tt.unknownToKern)
		}
	}
}

// kernelHasRDMA probes NETLINK_RDMA the way the kernel defines "has an RDMA
// subsystem" for this package.
func kernelHasRDMA(t *testing.T) bool {
	t.Helper()
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_RDMA)
	if err != nil {
		if errors.Is(err, unix.EPROTONOSUPPORT) {
			return false
		}
		t.Fatalf("probe NETLINK_RDMA: %v", err)
	}
	unix.Close(fd)
	return true
}

func TestSystemNetnsModeMatchesKernel(t *testing.T) {
	mode, err := SystemNetnsMode()
	if err != nil {
		t.Fatalf("SystemNetnsMode: %v", err)
	}
	if kernelHasRDMA(t) {
		if mode != NetnsShared && mode != NetnsExclusive {
			t.Fatalf("kernel has RDMA but SystemNetnsMode = %q", mode)
		}
		return
	}
	if mode != NetnsNone {
		t.Fatalf("kernel has no RDMA subsystem but SystemNetnsMode = %q, want %q", mode, NetnsNone)
	}
}

func TestMoveDeviceErrors(t *testing.T) {
	hasRDMA := kernelHasRDMA(t)
	tests := []struct {
		name, dev, from, to string
		want                string
	}{
		{"empty device", "", "", "", "device name is empty"},
		{"missing source netns", "mlx5_0", "/nonexistent/netns", "", "source netns"},
		{"missing target netns", "mlx5_0", "", "/nonexistent/netns", "target netns"},
		{"unknown device", "railtest_nodev", "", "/proc/self/ns/net", map[bool]string{
			false: "no RDMA subsystem", true: "not found in the source netns"}[hasRDMA]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := MoveDevice(tt.dev, tt.from, tt.to)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("MoveDevice(%q, %q, %q) = %v, want error containing %q", tt.dev, tt.from, tt.to, err, tt.want)
			}
		})
	}
}
