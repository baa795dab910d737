package process

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks is how many links one resolution follows (the kernel's own
// bound, MAXSYMLINKS).
const maxLinks = 40

// statInRoot stats path resolved inside the directory root: with
// openat2(RESOLVE_IN_ROOT) where the kernel has it (5.6+), else by
// walking the path one element at a time (useOpenat2 false: always the
// walk). The file is opened O_PATH: a device node, a FIFO or a socket is
// never opened for real.
func statInRoot(root int, path string, useOpenat2 bool) (unix.Stat_t, error) {
	var st unix.Stat_t
	fd := -1
	var err error
	if useOpenat2 {
		fd, err = unix.Openat2(root, path, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
		})
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			// A kernel before 5.6, or a seccomp filter that answers EPERM
			// for a syscall it does not know (openat2 itself never answers
			// EPERM for an O_PATH open).
			fd, err = walkInRoot(root, path)
		}
	} else {
		fd, err = walkInRoot(root, path)
	}
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	err = unix.Fstat(fd, &st)
	return st, err
}

// walkInRoot resolves path below root as RESOLVE_IN_ROOT does: ".." at
// the root stays there, an absolute link starts again from the root, at
// most maxLinks links; no magic links (procfs's) are followed: each
// element is opened O_NOFOLLOW and a link's target read and resolved by
// the walk itself. It returns an O_PATH descriptor of the file.
func walkInRoot(root int, path string) (int, error) {
	// dirs is the chain of directories from the root down to where the
	// walk is; dirs[0] is the root (not ours to close).
	dirs := []int{root}
	closeDirs := func(keep int) {
		for _, fd := range dirs[keep:] {
			if fd != root {
				_ = unix.Close(fd)
			}
		}
		dirs = dirs[:keep]
	}
	defer closeDirs(1)
	todo := elements(path)
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case ".":
			continue
		case "..":
			if len(dirs) > 1 {
				closeDirs(len(dirs) - 1)
			}
			continue
		}
		fd, err := unix.Openat(dirs[len(dirs)-1], name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			_ = unix.Close(fd)
			return -1, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			target, err := readLink(fd)
			_ = unix.Close(fd)
			if err != nil {
				return -1, err
			}
			if links++; links > maxLinks {
				return -1, unix.ELOOP
			}
			if strings.HasPrefix(target, "/") {
				closeDirs(1)
			}
			todo = append(elements(target), todo...)
		case unix.S_IFDIR:
			dirs = append(dirs, fd)
		default:
			if len(todo) > 0 {
				_ = unix.Close(fd)
				return -1, unix.ENOTDIR
			}
			return fd, nil
		}
	}
	// The path named a directory: hand back the last one.
	last := dirs[len(dirs)-1]
	if last == root {
		return unix.Openat(root, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	dirs = dirs[:len(dirs)-1]
	return last, nil
}

// elements splits a path into its names, empty ones dropped.
func elements(path string) []string {
	var out []string
	for _, e := range strings.Split(path, "/") {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

// readLink reads the target of a link opened O_PATH|O_NOFOLLOW.
func readLink(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
