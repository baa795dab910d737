package fakesys

import "fmt"

// builtins returns the built-in machines. RDMA devices are named in PCI
// order, as the kernel names them in probe order, so uverbsN belongs to
// mlx5_N.
func builtins() map[string]func() Host {
	return map[string]func() Host{
		// 8×H100 and 4 ConnectX-7 (InfiniBand) on two sockets: on each socket
		// one host bridge with two root ports, each leading to a PCIe switch
		// with two GPUs and one NIC.
		"h100x8-cx7x4": func() Host {
			return Host{Roots: []Root{
				{Bus: 0x15, NUMA: 0, Ports: []Slot{
					pcieSwitch(h100(), ib("mlx5_0"), h100()),
					pcieSwitch(h100(), ib("mlx5_1"), h100()),
				}},
				{Bus: 0x97, NUMA: 1, Ports: []Slot{
					pcieSwitch(h100(), ib("mlx5_2"), h100()),
					pcieSwitch(h100(), ib("mlx5_3"), h100()),
				}},
			}}
		},
		// 8 GPUs, each with its own ConnectX-7 under its own switch, two host
		// bridges per socket; an Ethernet storage NIC per socket on a root port
		// of its own and a dual-port Ethernet card bonded as mlx5_bond_0.
		"gpu8-nic8": func() Host {
			return Host{Roots: []Root{
				{Bus: 0x15, NUMA: 0, Ports: []Slot{
					pcieSwitch(h100(), ib("mlx5_0")),
					pcieSwitch(h100(), ib("mlx5_1")),
				}},
				{Bus: 0x37, NUMA: 0, Ports: []Slot{
					pcieSwitch(h100(), ib("mlx5_2")),
					pcieSwitch(h100(), ib("mlx5_3")),
					eth("mlx5_4"),
				}},
				{Bus: 0x97, NUMA: 1, Ports: []Slot{
					pcieSwitch(h100(), ib("mlx5_5")),
					pcieSwitch(h100(), ib("mlx5_6")),
				}},
				{Bus: 0xb7, NUMA: 1, Ports: []Slot{
					pcieSwitch(h100(), ib("mlx5_7")),
					pcieSwitch(h100(), ib("mlx5_8")),
					eth("mlx5_9"),
					bond("mlx5_bond_0"),
				}},
			}}
		},
		// Two sockets. Socket 0 has a two-level switch: GPU0, GPU1 and mlx5_0
		// under one lower switch, GPU2 and GPU3 under another, mlx5_1 on the
		// upper switch (PXB from every GPU there). Socket 1 has a one-level
		// switch with GPU4, GPU5 and mlx5_2, and GPU6, GPU7 and mlx5_3 each
		// straight on a root port.
		"twolevel-2s": func() Host {
			return Host{Roots: []Root{
				{Bus: 0x15, NUMA: 0, Ports: []Slot{
					pcieSwitch(
						pcieSwitch(h100(), h100(), ib("mlx5_0")),
						pcieSwitch(h100(), h100()),
						ib("mlx5_1"),
					),
				}},
				{Bus: 0x97, NUMA: 1, Ports: []Slot{
					pcieSwitch(h100(), h100(), ib("mlx5_2")),
					h100(),
					h100(),
					ib("mlx5_3"),
				}},
			}}
		},
		// One socket: GPU0, GPU1 and mlx5_0 under one switch; GPU2, GPU3 and
		// mlx5_1, whose port is DOWN, under another; an Ethernet bond
		// mlx5_bond_0 on a third root port.
		"down-bond": func() Host {
			down := ib("mlx5_1")
			down.Card.Funcs[0].State = "DOWN"
			return Host{Roots: []Root{
				{Bus: 0x15, NUMA: 0, Ports: []Slot{
					pcieSwitch(h100(), ib("mlx5_0"), h100()),
					pcieSwitch(h100(), down, h100()),
					bond("mlx5_bond_0"),
				}},
			}}
		},
		// One socket, two switches: GPU0 with a ConnectX-7 (RoCE) whose PF
		// mlx5_0 carries two sub-functions mlx5_1 and mlx5_2; GPU1 alone
		// under the other switch.
		"sf-1s": func() Host {
			card := eth("mlx5_0")
			card.Card.Model = "ConnectX-7"
			card.Card.Funcs[0].SFs = []Func{{RDMA: "mlx5_1", LinkLayer: "Ethernet"}, {RDMA: "mlx5_2", LinkLayer: "Ethernet"}}
			return Host{Roots: []Root{
				{Bus: 0x15, NUMA: 0, Ports: []Slot{
					pcieSwitch(h100(), card),
					pcieSwitch(h100()),
				}},
			}}
		},
		// Dual-port HCAs, one PCI function each with two ports and two
		// netdevs (dev_port 0 and 1), as ConnectX-3 Pro (mlx4) lays them out.
		// Socket 0: GPU0, GPU1 and the InfiniBand mlx4_0 (ports 1 and 2 on
		// ibp26s0 and ibp26s0d1) under one switch; GPU2, GPU3 and the RoCE
		// mlx4_1 (ens2, ens2d1) under another. Socket 1: GPU4 and a
		// single-port ConnectX-7 mlx5_0 under one switch.
		"dualport-2s": func() Host {
			return Host{Roots: []Root{
				{Bus: 0x15, NUMA: 0, Ports: []Slot{
					pcieSwitch(h100(), h100(), dualPort("mlx4_0", "InfiniBand", "")),
					pcieSwitch(h100(), h100(), dualPort("mlx4_1", "Ethernet", "ens2")),
				}},
				{Bus: 0x97, NUMA: 1, Ports: []Slot{
					pcieSwitch(h100(), ib("mlx5_0")),
				}},
			}}
		},
		// The rails of h100x8-cx7x4 (mlx5_0, mlx5_1 on socket 0; mlx5_3,
		// mlx5_4 on socket 1) beside the node's own networking: on socket 0
		// a ConnectX-6 Dx front-end NIC mlx5_2 on a root port of its own
		// (the node's address and default route sit on its netdev; tests
		// put them there in a netns), on socket 1 a RoCE LAG: two
		// ConnectX-6 Dx PFs enslaved to bond0, one RDMA device mlx5_bond_0.
		"frontend-lag": func() Host {
			return Host{Roots: []Root{
				{Bus: 0x15, NUMA: 0, Ports: []Slot{
					pcieSwitch(h100(), ib("mlx5_0"), h100()),
					pcieSwitch(h100(), ib("mlx5_1"), h100()),
					eth("mlx5_2"),
				}},
				{Bus: 0x97, NUMA: 1, Ports: []Slot{
					pcieSwitch(h100(), ib("mlx5_3"), h100()),
					pcieSwitch(h100(), ib("mlx5_4"), h100()),
					bond("mlx5_bond_0"),
				}},
			}}
		},
		// Four V100 PCIe on two sockets and one dual-port ConnectX-5
		// (InfiniBand): two PCI functions, mlx5_0 and mlx5_1, one port
		// each. Port 1 is cabled (ACTIVE); port 2 has no cable (DOWN,
		// Polling). GPU0, GPU1 and the card share a switch on socket 0;
		// GPU2 and GPU3 share one on socket 1.
		"v100x4-cx5-dualport": func() Host {
			card := &Card{Model: "ConnectX-5", Funcs: []Func{
				{RDMA: "mlx5_0", LinkLayer: "InfiniBand", Rate: "100 Gb/sec (4X EDR)"},
				{RDMA: "mlx5_1", LinkLayer: "InfiniBand", Rate: "10 Gb/sec (4X SDR)", State: "DOWN", PhysState: "Polling"},
			}}
			return Host{Roots: []Root{
				{Bus: 0x17, NUMA: 0, Ports: []Slot{pcieSwitch(v100(), v100(), Slot{Card: card})}},
				{Bus: 0x85, NUMA: 1, Ports: []Slot{pcieSwitch(v100(), v100())}},
			}}
		},
		// A workstation: one GPU and one RoCE NIC on two root ports.
		"lab-1x1": func() Host {
			return Host{Roots: []Root{
				{Bus: 0x00, NUMA: 0, Ports: []Slot{
					{GPU: &GPU{Model: "NVIDIA A100 80GB PCIe"}},
					eth("mlx5_0"),
				}},
			}}
		},
		// A cloud GPU VM (KVM, q35): one H200 and one ConnectX-7 VF passed
		// through, each on a PCIe root port of the host bridge; the VM has
		// one NUMA node and no ACPI proximity for the devices, so their
		// numa_node is -1 and their local_cpulist every CPU, as on every
		// such VM seen so far.
		"h200-vm": func() Host {
			return Host{Nodes: []NUMANode{{CPUs: "0-43"}}, Roots: []Root{
				{Bus: 0x00, NUMA: -1, Ports: []Slot{
					{GPU: &GPU{Model: "NVIDIA H200"}},
					ib("mlx5_0"),
				}},
			}}
		},
		// Azure ND H100 v5 as the VM sees it: Hyper-V passes each GPU and
		// each InfiniBand NIC (ConnectX-7 VF, mlx5_ibN, netdev ibN) through
		// on a VMBus PCI root of its own (domains 0001-0008 and 0101-0108),
		// so sysfs shows no switch; GPUs 0-3 and mlx5_ib0-3 on NUMA node 0,
		// the rest on node 1. The real pairing is in the NCCL topology file
		// Azure ships per VM size (testdata/ndv5-topo.xml in pkg/topology).
		"azure-ndh100v5": func() Host {
			h := Host{Nodes: []NUMANode{{CPUs: "0-47"}, {CPUs: "48-95"}}}
			for i := range 8 {
				h.Roots = append(h.Roots, Root{Domain: uint16(1 + i), NUMA: i / 4, VMBus: true, Ports: []Slot{h100()}})
			}
			for i := range 8 {
				nic := ib(fmt.Sprintf("mlx5_ib%d", i))
				nic.Card.Funcs[0].Netdev = fmt.Sprintf("ib%d", i)
				h.Roots = append(h.Roots, Root{Domain: uint16(0x101 + i), NUMA: i / 4, VMBus: true, Ports: []Slot{nic}})
			}
			return h
		},
		// A GB200 compute tray: two Grace CPUs (NUMA nodes 0 and 1, 72 CPUs
		// each), four Blackwell GPUs on chip-to-chip links, two per Grace,
		// each GPU's memory a NUMA node of its own without CPUs (2-5), and
		// four ConnectX-7 on Grace PCIe segments, two per socket. By PCIe
		// every GPU/NIC pair only meets at a CPU; the socket tells them apart.
		"gb200-tray": func() Host {
			gpu := func(node int) Slot {
				return Slot{GPU: &GPU{Model: "NVIDIA GB200", MemoryNode: &node}}
			}
			return Host{
				Nodes: []NUMANode{{CPUs: "0-71"}, {CPUs: "72-143"}, {}, {}, {}, {}},
				Roots: []Root{
					{Domain: 0x0000, NUMA: 0, Ports: []Slot{ib("mlx5_0")}},
					{Domain: 0x0002, NUMA: 0, Ports: []Slot{ib("mlx5_1")}},
					{Domain: 0x0008, NUMA: 0, Ports: []Slot{gpu(2)}},
					{Domain: 0x0009, NUMA: 0, Ports: []Slot{gpu(3)}},
					{Domain: 0x0010, NUMA: 1, Ports: []Slot{ib("mlx5_2")}},
					{Domain: 0x0012, NUMA: 1, Ports: []Slot{ib("mlx5_3")}},
					{Domain: 0x0018, NUMA: 1, Ports: []Slot{gpu(4)}},
					{Domain: 0x0019, NUMA: 1, Ports: []Slot{gpu(5)}},
				},
			}
		},
		// A 4-GPU board laid out like Dell's XE8640: only GPU0 shares a
		// switch with a NIC (mlx5_0); GPU1 sits on another host bridge of
		// socket 0; GPU2 on its own host bridge of socket 1; GPU3 on a root
		// port of the host bridge whose other root port holds mlx5_1.
		"xe8640": func() Host {
			return Host{Roots: []Root{
				{Bus: 0x15, NUMA: 0, Ports: []Slot{pcieSwitch(h100(), ib("mlx5_0"))}},
				{Bus: 0x37, NUMA: 0, Ports: []Slot{h100()}},
				{Bus: 0x97, NUMA: 1, Ports: []Slot{h100()}},
				{Bus: 0xb7, NUMA: 1, Ports: []Slot{h100(), ib("mlx5_1")}},
			}}
		},
		// 8×H100 and 8 ConnectX-7 RoCE PFs (mlx5_0…mlx5_7), each under a
		// switch with one GPU, four per socket; each PF has 4 SR-IOV VFs with
		// their own RDMA devices (mlx5_8…, named after the PFs as the kernel
		// names VFs enabled after boot), except mlx5_7 (sriov_numvfs 0 of 4);
		// mlx5_6's last VF is bound to vfio-pci (no netdev, no RDMA device).
		"h100x8-cx7x8-sriov": func() Host {
			var ports [2][]Slot
			vf := 8
			for i := range 8 {
				f := Func{RDMA: fmt.Sprintf("mlx5_%d", i), LinkLayer: "Ethernet", TotalVFs: 4}
				for k := range 4 {
					if i == 7 {
						break
					}
					v := Func{RDMA: fmt.Sprintf("mlx5_%d", vf), LinkLayer: "Ethernet"}
					if i == 6 && k == 3 {
						v = Func{LinkLayer: "Ethernet", Driver: vfioDriver}
					} else {
						vf++
					}
					f.VFs = append(f.VFs, v)
				}
				ports[i/4] = append(ports[i/4], pcieSwitch(h100(), Slot{Card: &Card{Model: "ConnectX-7", Funcs: []Func{f}}}))
			}
			return Host{Roots: []Root{
				{Bus: 0x15, NUMA: 0, Ports: ports[0]},
				{Bus: 0x97, NUMA: 1, Ports: ports[1]},
			}}
		},
		// Two H100 and two ConnectX-7 InfiniBand PFs (mlx5_0, mlx5_1), each
		// under a switch with one GPU, each PF with 4 SR-IOV VFs as mlx5 makes
		// them on an IB port: IPoIB netdevs (ARPHRD_INFINIBAND, 20-byte
		// addresses) and RDMA devices of their own (mlx5_2…mlx5_9), all
		// bound to mlx5_core.
		"h100x2-cx7ib-sriov": func() Host {
			var ports []Slot
			vf := 2
			for i := range 2 {
				f := Func{RDMA: fmt.Sprintf("mlx5_%d", i), LinkLayer: "InfiniBand", TotalVFs: 8}
				for range 4 {
					f.VFs = append(f.VFs, Func{RDMA: fmt.Sprintf("mlx5_%d", vf), LinkLayer: "InfiniBand"})
					vf++
				}
				ports = append(ports, pcieSwitch(h100(), Slot{Card: &Card{Model: "ConnectX-7", Funcs: []Func{f}}}))
			}
			return Host{Roots: []Root{{Bus: 0x15, NUMA: 0, Ports: ports}}}
		},
		// The SR-IOV VM rig's guest (../shared/rigs/sriov): three Intel 82576
		// PFs (igb, at most 7 VFs, igbvf VFs without RDMA devices): pf0 on a
		// root port with 4 VFs, pf1 and pf2 behind a PCIe switch with 4 and 2;
		// rxe0 and rxe1 (Soft-RoCE) on pf0 and pf1 place them; fake GPUs
		// beside pf1 (GPU0, behind the switch) and on a root port of their
		// own (GPU1).
		"sriov-vm-igb": func() Host {
			igb := func(netdev string, vfs int) Slot {
				f := Func{LinkLayer: "Ethernet", Netdev: netdev, NoRDMA: true, TotalVFs: 7}
				for range vfs {
					f.VFs = append(f.VFs, Func{LinkLayer: "Ethernet", NoRDMA: true})
				}
				return Slot{Card: &Card{Model: IntelIGB, Funcs: []Func{f}}}
			}
			return Host{
				Roots: []Root{{Bus: 0x00, NUMA: 0, Ports: []Slot{
					igb("pf0", 4),
					pcieSwitch(igb("pf1", 4), igb("pf2", 2), Slot{GPU: &GPU{Model: "NVIDIA L40S"}}),
					{GPU: &GPU{Model: "NVIDIA L40S"}},
				}}},
				SoftRoCE: []SoftRoCE{{RDMA: "rxe0", Netdev: "pf0"}, {RDMA: "rxe1", Netdev: "pf1"}},
			}
		},
		// A softRoCE VM (q35, as the fabric rig's guests and cloud VMs without
		// RDMA): two virtio-net NICs (eth1, eth2) without any RDMA device,
		// each behind a PCIe switch with a GPU (PIX), the node's own e1000e
		// (eth0) on a root port of its own, and a virtio-9p function (no
		// netdev); one NUMA node, every PCI function's numa_node -1, as
		// QEMU guests show them. No rxe in the host's netns: pods get theirs.
		"softroce-vm": func() Host {
			virtio := func(netdev string) Slot {
				return Slot{Card: &Card{Model: VirtioNet, Funcs: []Func{{LinkLayer: "Ethernet", Netdev: netdev, NoRDMA: true}}}}
			}
			return Host{Roots: []Root{{Bus: 0x00, NUMA: -1, Ports: []Slot{
				{Card: &Card{Model: E1000E, Funcs: []Func{{LinkLayer: "Ethernet", Netdev: "eth0", NoRDMA: true}}}},
				{Other: &Other{Vendor: "0x1af4", Device: "0x1049", Class: "0x000200", Driver: "virtio-pci"}},
				pcieSwitch(virtio("eth1"), Slot{GPU: &GPU{Model: "NVIDIA L40S"}}),
				pcieSwitch(virtio("eth2"), Slot{GPU: &GPU{Model: "NVIDIA L40S"}}),
			}}}, Nodes: []NUMANode{{CPUs: "0-1"}}, RdmaCM: true}
		},
		// One GPU and Soft-RoCE rxe0 on a virtual netdev with no PCI parent.
		"softroce": func() Host {
			return Host{
				Roots: []Root{
					{Bus: 0x00, NUMA: 0, Ports: []Slot{{GPU: &GPU{Model: "NVIDIA L40S"}}}},
				},
				SoftRoCE: []SoftRoCE{{RDMA: "rxe0", Netdev: "veth-rxe0"}},
			}
		},
	}
}

func pcieSwitch(children ...Slot) Slot { return Slot{Switch: children} }

func h100() Slot { return Slot{GPU: &GPU{Model: "NVIDIA H100 80GB HBM3"}} }

func v100() Slot { return Slot{GPU: &GPU{Model: "Tesla V100-PCIE-32GB"}} }

func ib(name string) Slot {
	return Slot{Card: &Card{Model: "ConnectX-7", Funcs: []Func{{RDMA: name, LinkLayer: "InfiniBand"}}}}
}

func eth(name string) Slot {
	return Slot{Card: &Card{Model: "ConnectX-6 Dx", Funcs: []Func{{RDMA: name, LinkLayer: "Ethernet"}}}}
}

// dualPort is a ConnectX-3 Pro whose one function carries ports 1 and 2.
func dualPort(name, linkLayer, netdev string) Slot {
	return Slot{Card: &Card{Model: "ConnectX-3 Pro", Funcs: []Func{{
		RDMA: name, LinkLayer: linkLayer, Netdev: netdev, MorePorts: []Port{{}},
	}}}}
}

func bond(name string) Slot {
	return Slot{Card: &Card{
		Model: "ConnectX-6 Dx",
		Funcs: []Func{{LinkLayer: "Ethernet"}, {LinkLayer: "Ethernet"}},
		Bond:  name,
	}}
}
