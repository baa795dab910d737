package nri

import (
	"testing"
)

const mib8 = 8 << 20

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"memlock with a unit NRI cannot mean", Config{Memlock: "8MB"}},
		{"negative memlock", Config{Memlock: "-1"}},
		{"index with one digit", Config{PluginIndex: "1"}},
		{"index with letters", Config{PluginIndex: "ab"}},
		{"name with a slash", Config{PluginName: "a/b"}},
		{"bad stop grace", Config{StopGrace: "soon"}},
		{"gpuAutoInject without namespaces", Config{GPUAutoInject: true}},
		{"CDI kind without a class", Config{GPUCDIKinds: []string{"nvidia.com"}}},
		{"CDI kind with a device name", Config{GPUCDIKinds: []string{"nvidia.com/gpu=0"}}},
		{"CDI kind without a vendor", Config{GPUCDIKinds: []string{"/gpu"}}},
		{"topology file on the host, relative", Config{TopologyFileOnHost: "etc/topo.xml"}},
		{"topology file on the host, not clean", Config{TopologyFileOnHost: "/etc/../topo.xml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := newPlugin(tt.cfg, testMachine(t.TempDir()), newFakeState(), nil, nil); err == nil {
				t.Fatalf("New(%+v) accepted a bad config", tt.cfg)
			}
			if err := tt.cfg.Validate(); err == nil {
				t.Fatalf("Validate(%+v) accepted a bad config", tt.cfg)
			}
		})
	}
	if _, err := newPlugin(Config{}, nil, newFakeState(), nil, nil); err == nil {
		t.Fatal("New accepted a nil machine")
	}
	if _, err := newPlugin(Config{}, testMachine(t.TempDir()), nil, nil, nil); err == nil {
		t.Fatal("New accepted a nil state")
	}
}

func TestParseMemlock(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"unlimited", rlimInfinity, true},
		{"8388608", mib8, true},
		{"8Mi", mib8, true},
		{"64Ki", 64 << 10, true},
		{"2Gi", 2 << 30, true},
		{"1Ti", 1 << 40, true},
		{"8M", 0, false},
		{"8MB", 0, false},
		{"", 0, false},
		{"lots", 0, false},
		{"20000000Ti", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseMemlock(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseMemlock(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
