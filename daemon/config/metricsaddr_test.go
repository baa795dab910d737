package config

import (
	"strings"
	"testing"
)

func TestMetricsAddr(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "", want: ""},
		{in: ":9473", want: ":9473"},
		{in: "127.0.0.1:9473", want: "127.0.0.1:9473"},
		{in: "localhost:9473", want: "localhost:9473"},
		{in: "10.0.0.5:9473", want: "10.0.0.5:9473"},
		{in: "[fd00::5]:9473", want: "[fd00::5]:9473"},
		{in: "fd00::5:9473", want: "[fd00::5]:9473"}, // $(NODE_IP):9473 on an IPv6 node
		{in: "9473", err: "metricsAddr"},
		{in: ":http", err: "port"},
		{in: "node:9473", err: "want an IP address"},
		{in: "10.0.0.5:99999", err: "port"},
	}
	for _, tt := range tests {
		c := Config{MetricsAddr: tt.in}
		err := c.finishMetricsAddr()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: %v; want an error with %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || c.MetricsAddr != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.in, c.MetricsAddr, err, tt.want)
		}
	}
}
