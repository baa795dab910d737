package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseDevNumbers reads the text of a sysfs `dev` file, "MAJOR:MINOR" in
// decimal as the kernel prints it (for example "231:192" or "511:1048575").
// The kernel has already split the numbers, so minors above 255 need no
// decoding; both must fit the kernel's 12-bit major and 20-bit minor.
func ParseDevNumbers(s string) (major, minor uint32, err error) {
	text := strings.TrimSpace(s)
	majStr, minStr, ok := strings.Cut(text, ":")
	if !ok {
		return 0, 0, fmt.Errorf("device numbers %q: want MAJOR:MINOR", s)
	}
	maj, err := strconv.ParseUint(majStr, 10, 32)
	if err != nil || maj >= 1<<12 {
		return 0, 0, fmt.Errorf("device numbers %q: major must be a decimal below 4096", s)
	}
	mnr, err := strconv.ParseUint(minStr, 10, 32)
	if err != nil || mnr >= 1<<20 {
		return 0, 0, fmt.Errorf("device numbers %q: minor must be a decimal below 1048576", s)
	}
	return uint32(maj), uint32(mnr), nil
}

// Rdev encodes the numbers as a Linux dev_t the way glibc's makedev does,
// for mknod and OCI device entries. Minors above 255 land in bits 20-39.
func (c CharDev) Rdev() uint64 {
	maj, mnr := uint64(c.Major), uint64(c.Minor)
	return (maj&0xfffff000)<<32 | (maj&0x00000fff)<<8 |
		(mnr&0xffffff00)<<12 | (mnr & 0x000000ff)
}

// parseUevent reads MAJOR, MINOR and DEVNAME from a uevent file's text.
func parseUevent(text string) (major, minor uint32, devname string, err error) {
	var majStr, minStr string
	for line := range strings.SplitSeq(text, "\n") {
		key, val, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch key {
		case "MAJOR":
			majStr = val
		case "MINOR":
			minStr = val
		case "DEVNAME":
			devname = val
		}
	}
	if majStr == "" || minStr == "" {
		return 0, 0, devname, fmt.Errorf("uevent has no MAJOR and MINOR")
	}
	major, minor, err = ParseDevNumbers(majStr + ":" + minStr)
	return major, minor, devname, err
}

// charDev reads the device numbers of the char device whose sysfs
// directory is dir: from `dev`, or from `uevent` when `dev` is missing.
func (f *fsys) charDev(dir, name string) (*CharDev, error) {
	cd := &CharDev{Name: name, Path: "/dev/infiniband/" + name}
	text, err := f.read(dir + "/dev")
	if err == nil {
		cd.Major, cd.Minor, err = ParseDevNumbers(text)
		if err != nil {
			return nil, fmt.Errorf("%s/dev: %w", dir, err)
		}
		return cd, nil
	}
	uevent, uerr := f.read(dir + "/uevent")
	if uerr != nil {
		return nil, fmt.Errorf("%s: no dev and no uevent file (%s)", dir, why(dir+"/uevent", uerr))
	}
	maj, mnr, devname, perr := parseUevent(uevent)
	if perr != nil {
		return nil, fmt.Errorf("%s/uevent: %w", dir, perr)
	}
	cd.Major, cd.Minor = maj, mnr
	if devname != "" {
		cd.Path = "/dev/" + strings.TrimPrefix(devname, "/dev/")
	}
	return cd, nil
}
