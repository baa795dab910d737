package topology

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

const (
	verbsClassDir = "/sys/class/infiniband_verbs"
	madClassDir   = "/sys/class/infiniband_mad"
	rdmaCMDir     = "/sys/class/misc/rdma_cm"
)

type madKey struct {
	dev  string
	port int
}

type madDevs struct {
	umad, issm *CharDev
}

// charDevs are the RDMA char devices found in sysfs, by owner.
type charDevs struct {
	verbs map[string]*CharDev // RDMA device name -> uverbsN
	mad   map[madKey]madDevs  // (RDMA device, port) -> umadN, issmN
}

// scanCharDevs reads /sys/class/infiniband_verbs/uverbsN/{ibdev,dev} and
// /sys/class/infiniband_mad/{umadN,issmN}/{ibdev,port,dev}.
func (d *discovery) scanCharDevs() charDevs {
	cd := charDevs{verbs: map[string]*CharDev{}, mad: map[madKey]madDevs{}}
	for _, name := range d.classNames(verbsClassDir, "uverbs") {
		dir := verbsClassDir + "/" + name
		owner, dev, ok := d.ownedCharDev(dir, name)
		if ok {
			cd.verbs[owner] = dev
		}
	}
	for _, prefix := range []string{"umad", "issm"} {
		for _, name := range d.classNames(madClassDir, prefix) {
			d.addMad(cd.mad, madClassDir+"/"+name, name, prefix == "issm")
		}
	}
	return cd
}

// classNames lists a class directory's entries with the given prefix
// (skipping files such as abi_version). A missing class is no problem:
// the module is simply not loaded.
func (d *discovery) classNames(dir, prefix string) []string {
	names, err := d.fs.names(dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			d.problem("rdma", why(dir, err))
		}
		return nil
	}
	out := names[:0]
	for _, name := range names {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	return out
}

// ownedCharDev reads a class char device's owner (ibdev) and numbers.
func (d *discovery) ownedCharDev(dir, name string) (string, *CharDev, bool) {
	owner, err := d.fs.read(dir + "/ibdev")
	if err != nil {
		d.problem(name, d.linkProblem(dir+"/ibdev", err))
		return "", nil, false
	}
	dev, err := d.fs.charDev(dir, name)
	if err != nil {
		d.problem(name, err.Error())
		return "", nil, false
	}
	return owner, dev, true
}

func (d *discovery) addMad(mad map[madKey]madDevs, dir, name string, issm bool) {
	owner, dev, ok := d.ownedCharDev(dir, name)
	if !ok {
		return
	}
	text, err := d.fs.read(dir + "/port")
	port, perr := strconv.Atoi(text)
	if err != nil || perr != nil || port < 1 {
		d.problem(name, dir+"/port: want a port number")
		return
	}
	key := madKey{dev: owner, port: port}
	entry := mad[key]
	if issm {
		entry.issm = dev
	} else {
		entry.umad = dev
	}
	mad[key] = entry
}

// rdmaCM reads /sys/class/misc/rdma_cm/dev (the rdma_ucm module); its
// absence is a problem only on a node with RDMA devices.
func (d *discovery) rdmaCM(needed bool) *CharDev {
	if !d.fs.exists(rdmaCMDir) {
		switch {
		case d.fs.isLink(rdmaCMDir):
			d.problem("rdma_cm", d.linkProblem(rdmaCMDir, os.ErrNotExist))
		case needed:
			d.problem("rdma_cm", rdmaCMDir+" missing (is rdma_ucm loaded?)")
		}
		return nil
	}
	dev, err := d.fs.charDev(rdmaCMDir, "rdma_cm")
	if err != nil {
		d.problem("rdma_cm", err.Error())
		return nil
	}
	return dev
}
