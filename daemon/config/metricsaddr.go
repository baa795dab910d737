package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// finishMetricsAddr checks metricsAddr (host:port, host empty for every
// address) and brackets a bare IPv6 host: the chart's bind "node" gives
// the node's address as Kubernetes expands it ($(NODE_IP):9473), which
// for an IPv6 node is fd00::5:9473.
func (c *Config) finishMetricsAddr() error {
	if c.MetricsAddr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(c.MetricsAddr)
	if err != nil {
		i := strings.LastIndexByte(c.MetricsAddr, ':')
		if a, perr := netip.ParseAddr(c.MetricsAddr[:max(i, 0)]); i > 0 && perr == nil && a.Is6() {
			host, port, err = a.String(), c.MetricsAddr[i+1:], nil
		}
	}
	if n, perr := strconv.ParseUint(port, 10, 16); err == nil && (perr != nil || n == 0) {
		err = fmt.Errorf("port %q", port)
	}
	if err == nil && host != "" && host != "localhost" {
		if _, perr := netip.ParseAddr(host); perr != nil {
			err = fmt.Errorf("host %q: want an IP address", host)
		}
	}
	if err != nil {
		return fmt.Errorf("metricsAddr %q: %v: want host:port, e.g. \":9473\" (every address), \"127.0.0.1:9473\" or the node's address", c.MetricsAddr, err)
	}
	c.MetricsAddr = net.JoinHostPort(host, port)
	return nil
}
