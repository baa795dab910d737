package kubeclient

import (
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestNewDefaults(t *testing.T) {
	tests := []struct {
		name        string
		in          rest.Config
		wantQPS     float32
		wantBurst   int
		wantTimeout time.Duration
	}{
		{name: "nothing set", in: rest.Config{Host: "https://127.0.0.1:6443"}, wantQPS: DefaultQPS, wantBurst: DefaultBurst, wantTimeout: DefaultTimeout},
		{name: "caller's limits kept", in: rest.Config{Host: "https://127.0.0.1:6443", QPS: 3, Burst: 4, Timeout: time.Second},
			wantQPS: 3, wantBurst: 4, wantTimeout: time.Second},
		{name: "no limit kept", in: rest.Config{Host: "https://127.0.0.1:6443", QPS: -1}, wantQPS: -1, wantTimeout: DefaultTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			c, err := New(&in, "test")
			if err != nil {
				t.Fatal(err)
			}
			if c.Config.QPS != tt.wantQPS || c.Config.Burst != tt.wantBurst || c.Config.Timeout != tt.wantTimeout {
				t.Errorf("qps %v burst %d timeout %s; want %v %d %s", c.Config.QPS, c.Config.Burst, c.Config.Timeout,
					tt.wantQPS, tt.wantBurst, tt.wantTimeout)
			}
			if in.QPS != tt.in.QPS || in.Timeout != tt.in.Timeout {
				t.Error("New changed the caller's config")
			}
			if c.Kube == nil || c.NAD == nil || c.Watch == nil || c.Config.UserAgent != "test" {
				t.Errorf("clients incomplete: %+v", c)
			}
		})
	}
}
