package topology

import (
	"os"
	"strings"
	"testing"
)

// FuzzParseTopoFile: any bytes give a file or an error, never a panic; a
// file accepted names each address as a GPU or a NIC, never both, and
// the work stays bounded (depth, elements).
func FuzzParseTopoFile(f *testing.F) {
	if data, err := os.ReadFile("testdata/ndv5-topo.xml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`<system><cpu numaid="0"><pci busid="0000:01:00.0" class="0x030200"/><pci busid="0000:02:00.0"><nic/></pci></cpu></system>`))
	f.Add([]byte(`<system><cpu/></system><system/>`))
	f.Add([]byte(strings.Repeat("<pci>", 100)))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := ParseTopoFile(data)
		if err != nil {
			return
		}
		for pci := range tf.gpus {
			if _, ok := tf.nics[pci]; ok {
				t.Fatalf("%s is both a GPU and a NIC", pci)
			}
		}
		for _, places := range []map[string]topoPlace{tf.gpus, tf.nics} {
			for pci, at := range places {
				if len(at.bridges) > MaxTopoDepth {
					t.Fatalf("%s below %d bridges", pci, len(at.bridges))
				}
			}
		}
	})
}
