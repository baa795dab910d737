//go:build !linux

package server

import "net"

// peerPID is not available on this system.
func peerPID(net.Conn) string { return "unknown" }
