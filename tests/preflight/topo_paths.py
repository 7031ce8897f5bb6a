#!/usr/bin/env python3
"""dlcomm topo's PCIe path names on a made-up two-socket host, loaded by hwloc
from XML (HWLOC_XMLFILE): a GPU and a NIC under one switch (PIX), GPUs under
two switches of one switch (PXB), under one host bridge (PHB), under two host
bridges of one socket (NODE), and across sockets (SYS).
    topo_paths.py DLCOMM
    topo_paths.py --write-xml PATH   (the host, for other tests)"""
import json
import os
import subprocess
import sys
import tempfile

gp = [100]


def obj(kind, attrs, children=""):
    gp[0] += 1
    a = " ".join(f'{k}="{v}"' for k, v in attrs.items())
    return f'<object type="{kind}" gp_index="{gp[0]}" {a}>{children}</object>\n'


def cpu(mask, node):
    return {"cpuset": mask, "complete_cpuset": mask, "nodeset": node, "complete_nodeset": node}


def host_bridge(lo, hi, kids):
    return obj("Bridge", {"bridge_type": "0-1", "depth": "0", "bridge_pci": f"0000:[{lo}-{hi}]"}, kids)


def switch(busid, lo, hi, kids, depth=1):
    return obj("Bridge", {"bridge_type": "1-1", "depth": str(depth), "pci_busid": busid,
                          "pci_type": "0604 [10b5:8796] [0000:0000] 00", "pci_link_speed": "0.0",
                          "bridge_pci": f"0000:[{lo}-{hi}]"}, kids)


def dev(busid, cls, vendor, osdev=None):
    kids = ""
    if osdev:
        gp[0] += 1
        kids = f'<object type="OSDev" gp_index="{gp[0]}" name="{osdev[0]}" osdev_type="{osdev[1]}"/>\n'
    return obj("PCIDev", {"pci_busid": busid, "pci_type": f"{cls} [{vendor}:2335] [{vendor}:18be] a1",
                          "pci_link_speed": "0.0"}, kids)


def package(i, io):
    mask, node = f"0x{1 << i:08x}", f"0x{1 << i:08x}"
    numa = obj("NUMANode", {"os_index": i, **cpu(mask, node), "local_memory": "1073741824"})
    core = obj("Core", {"os_index": i, **cpu(mask, node)},
               obj("PU", {"os_index": i, **cpu(mask, node)}))
    return obj("Package", {"os_index": i, **cpu(mask, node)}, numa + core + io)


GPU, NIC = "0302", "0200"
s0 = host_bridge("00", "1f",
                 switch("0000:00:01.0", "01", "05",
                        switch("0000:01:00.0", "02", "02",
                               dev("0000:02:00.0", GPU, "10de") +
                               dev("0000:02:01.0", NIC, "15b3", ("mlx5_0", 3)), 2) +
                        switch("0000:01:01.0", "04", "04", dev("0000:04:00.0", GPU, "10de"), 2)) +
                 switch("0000:00:02.0", "06", "06", dev("0000:06:00.0", GPU, "10de")))
s0b = host_bridge("20", "2f", switch("0000:20:01.0", "21", "21", dev("0000:21:00.0", GPU, "10de")))
s1 = host_bridge("80", "8f", switch("0000:80:01.0", "81", "81",
                                    dev("0000:81:00.0", NIC, "15b3", ("eth2", 2))))
machine = obj("Machine", {"os_index": 0, **cpu("0x00000003", "0x00000003"),
                          "allowed_cpuset": "0x00000003", "allowed_nodeset": "0x00000003"},
              package(0, s0 + s0b) + package(1, s1))
xml = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n'
       f'<topology version="2.0">\n{machine}</topology>\n')

if sys.argv[1] == "--write-xml":
    open(sys.argv[2], "w").write(xml)
    sys.exit(0)

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "host.xml")
    open(path, "w").write(xml)
    out = os.path.join(d, "topo.json")
    env = dict(os.environ, HWLOC_XMLFILE=path, HWLOC_THISSYSTEM="0")
    subprocess.run([sys.argv[1], "topo", "--json", out], env=env, check=True)
    h = json.load(open(out))["hosts"][0]

ids = [g["bus_id"] for g in h["gpus"]]
assert sorted(ids) == ["0000:02:00.0", "0000:04:00.0", "0000:06:00.0", "0000:21:00.0"], ids
assert [len(n["cpus"]) > 0 for n in h["numa_nodes"]] == [True, True], h["numa_nodes"]
numa = {g["bus_id"]: g["numa"] for g in h["gpus"]}
assert set(numa.values()) == {0}, numa
m = {(ids[i], ids[j]): h["gpu_gpu"][i][j] for i in range(4) for j in range(4)}
want = {("0000:02:00.0", "0000:04:00.0"): "PXB", ("0000:02:00.0", "0000:06:00.0"): "PHB",
        ("0000:02:00.0", "0000:21:00.0"): "NODE", ("0000:04:00.0", "0000:06:00.0"): "PHB",
        ("0000:06:00.0", "0000:21:00.0"): "NODE", ("0000:02:00.0", "0000:02:00.0"): "X"}
for (a, b), p in want.items():
    assert m[(a, b)] == p and m[(b, a)] == p, f"{a}-{b}: {m[(a, b)]}, want {p}"
nics = {n["name"]: n for n in h["nics"]}
assert nics["mlx5_0"]["kind"] == "openfabrics" and nics["eth2"]["kind"] == "network", nics
assert nics["eth2"]["numa"] == 1 and nics["mlx5_0"]["numa"] == 0
cols = h["gpu_nic_columns"]
gn = {(ids[i], cols[k]): h["gpu_nic"][i][k] for i in range(4) for k in range(len(cols))}
assert gn[("0000:02:00.0", "mlx5_0")] == "PIX", gn
assert gn[("0000:04:00.0", "mlx5_0")] == "PXB", gn
assert all(gn[(g, "eth2")] == "SYS" for g in ids), gn
print("paths:", json.dumps(h["gpu_gpu"]), json.dumps(h["gpu_nic"]))
