package server

import (
	"net"
	"strconv"

	"golang.org/x/sys/unix"
)

// peerPID is the pid of the process that listens at the other end of conn,
// as the kernel recorded it, or "unknown".
func peerPID(conn net.Conn) string {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return "unknown"
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return "unknown"
	}
	pid := "unknown"
	_ = raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil && cred.Pid > 0 {
			pid = strconv.Itoa(int(cred.Pid))
		}
	})
	return pid
}
