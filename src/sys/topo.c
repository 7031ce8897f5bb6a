/* This host through hwloc: NUMA nodes, cores, GPUs, NICs and the PCIe paths
 * between them, named as `nvidia-smi topo -m` names them. */
#include "sys.h"

#include <hwloc.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static hwloc_topology_t load(void)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return NULL;
    /* PCI bridges, GPUs and NICs are dropped unless asked for. */
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return NULL;
    }
    return t;
}

/* The NUMA node (logical index) nearest an object; -1 if not one node. */
static int obj_numa(hwloc_topology_t t, hwloc_obj_t o)
{
    hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, o);
    if (!a || !a->nodeset || hwloc_bitmap_weight(a->nodeset) != 1)
        return hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) == 1 ? 0 : -1;
    unsigned os = (unsigned)hwloc_bitmap_first(a->nodeset);
    for (hwloc_obj_t n = NULL; (n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n));)
        if (n->os_index == os)
            return (int)n->logical_index;
    return -1;
}

static hwloc_obj_t pci_by_busid(hwloc_topology_t t, const char *bus_id)
{
    unsigned dom, bus, dev, fn;
    if (sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
        return NULL;
    return hwloc_get_pcidev_by_busid(t, dom, bus, dev, fn);
}

int dl_sys_pci_numa(const char *bus_id)
{
    hwloc_topology_t t = load();
    if (!t)
        return -1;
    hwloc_obj_t o = pci_by_busid(t, bus_id);
    int n = o ? obj_numa(t, o) : -1;
    hwloc_topology_destroy(t);
    return n;
}

int dl_sys_binding_numa(unsigned long long *mask, int *nnuma, char *cpus, size_t len)
{
    *mask = 0;
    *nnuma = 0;
    hwloc_topology_t t = load();
    if (!t)
        return -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int all = 0;
    if (hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) != 0)
        hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(t));
    hwloc_bitmap_list_snprintf(cpus, len, set);
    *nnuma = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    for (hwloc_obj_t n = NULL; (n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n));)
        if (n->cpuset && hwloc_bitmap_intersects(n->cpuset, set) && n->logical_index < 64)
            *mask |= 1ULL << n->logical_index;
    all = hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(t), set);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(t);
    return all;
}

static int is_pci_bridge(hwloc_obj_t o)
{
    return o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

/* hwloc's helper compares depths, which I/O objects do not have: walk up. */
static hwloc_obj_t common_ancestor(hwloc_obj_t a, hwloc_obj_t b)
{
    for (hwloc_obj_t x = a; x; x = x->parent)
        for (hwloc_obj_t y = b; y; y = y->parent)
            if (x == y)
                return x;
    return NULL;
}

/* PIX: at most one PCIe bridge between; PXB: several, no host bridge;
 * PHB: through a host bridge; NODE: between host bridges of one NUMA node;
 * SYS: across the interconnect between NUMA nodes. */
static const char *pci_path(hwloc_topology_t t, hwloc_obj_t a, hwloc_obj_t b)
{
    int na = obj_numa(t, a), nb = obj_numa(t, b);
    if (na != nb || na < 0)
        return "SYS";
    hwloc_obj_t c = common_ancestor(a, b);
    if (!c || !hwloc_obj_type_is_io(c->type))
        return "NODE";
    if (c->type == HWLOC_OBJ_BRIDGE && c->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
        return "PHB";
    int bridges = is_pci_bridge(c);
    for (hwloc_obj_t o = a->parent; o && o != c; o = o->parent)
        bridges += is_pci_bridge(o);
    for (hwloc_obj_t o = b->parent; o && o != c; o = o->parent)
        bridges += is_pci_bridge(o);
    return bridges <= 1 ? "PIX" : "PXB";
}

/* NV# when GPUs share NVLinks (directly, or both through NVSwitches). */
static int nvlinks_between(const dl_gpus_t *g, int i, int j)
{
    int direct = 0, sw_i = 0, sw_j = 0;
    for (int l = 0; l < g->gpu[i].nvlink_up && l < DL_GPU_MAX_LINKS; l++) {
        int to_gpu = 0;
        for (int k = 0; k < g->count; k++)
            to_gpu |= strcmp(g->gpu[i].nvlink_peer[l], g->gpu[k].bus_id) == 0;
        direct += strcmp(g->gpu[i].nvlink_peer[l], g->gpu[j].bus_id) == 0;
        sw_i += !to_gpu;
    }
    for (int l = 0; l < g->gpu[j].nvlink_up && l < DL_GPU_MAX_LINKS; l++) {
        int to_gpu = 0;
        for (int k = 0; k < g->count; k++)
            to_gpu |= strcmp(g->gpu[j].nvlink_peer[l], g->gpu[k].bus_id) == 0;
        sw_j += !to_gpu;
    }
    return direct ? direct : (sw_i < sw_j ? sw_i : sw_j);
}

typedef struct {
    char name[96], bus_id[32];
    int nvml; /* index into gpus, -1 when hwloc alone found it */
    hwloc_obj_t obj;
} topo_gpu_t;

/* NVML's GPUs, or without NVML the NVIDIA display/3D PCI functions hwloc sees. */
static int find_gpus(hwloc_topology_t t, const dl_gpus_t *g, topo_gpu_t *out, int max)
{
    int n = 0;
    for (int i = 0; g && i < g->count && n < max; i++, n++) {
        snprintf(out[n].name, sizeof(out[n].name), "%s", g->gpu[i].name);
        snprintf(out[n].bus_id, sizeof(out[n].bus_id), "%s", g->gpu[i].bus_id);
        out[n].nvml = i;
        out[n].obj = pci_by_busid(t, g->gpu[i].bus_id);
    }
    if (n)
        return n;
    for (hwloc_obj_t o = NULL; n < max && (o = hwloc_get_next_pcidev(t, o));) {
        unsigned cls = o->attr->pcidev.class_id;
        if (o->attr->pcidev.vendor_id != 0x10de || (cls != 0x0300 && cls != 0x0302))
            continue;
        snprintf(out[n].name, sizeof(out[n].name), "NVIDIA %04x", o->attr->pcidev.device_id);
        snprintf(out[n].bus_id, sizeof(out[n].bus_id), "%04x:%02x:%02x.%x",
                 o->attr->pcidev.domain, o->attr->pcidev.bus, o->attr->pcidev.dev,
                 o->attr->pcidev.func);
        out[n].nvml = -1;
        out[n++].obj = o;
    }
    return n;
}

static void add_numa(hwloc_topology_t t, cJSON *host)
{
    cJSON *arr = cJSON_AddArrayToObject(host, "numa_nodes");
    for (hwloc_obj_t n = NULL; (n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n));) {
        char cpus[256] = "";
        if (n->cpuset)
            hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), n->cpuset);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "index", n->logical_index);
        cJSON_AddStringToObject(e, "cpus", cpus);
        cJSON_AddNumberToObject(e, "memory_bytes", (double)n->attr->numanode.local_memory);
        cJSON_AddItemToArray(arr, e);
    }
    cJSON_AddNumberToObject(host, "packages", hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE));
    cJSON_AddNumberToObject(host, "cores", hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE));
    cJSON_AddNumberToObject(host, "pus", hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
}

/* NICs: hwloc's network and OpenFabrics OS devices (on a PCI function);
 * other interfaces (virtual, or a bus hwloc cannot see) are listed apart. */
static int add_nics(hwloc_topology_t t, cJSON *host, hwloc_obj_t *pci, int max)
{
    cJSON *arr = cJSON_AddArrayToObject(host, "nics");
    cJSON *cols = cJSON_AddArrayToObject(host, "gpu_nic_columns"); /* NICs on PCI */
    int n = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(t, o));) {
        hwloc_obj_osdev_type_t k = o->attr->osdev.type;
        if (k != HWLOC_OBJ_OSDEV_NETWORK && k != HWLOC_OBJ_OSDEV_OPENFABRICS)
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", o->name ? o->name : "?");
        cJSON_AddStringToObject(e, "kind", k == HWLOC_OBJ_OSDEV_NETWORK ? "network" : "openfabrics");
        hwloc_obj_t p = o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE ? o->parent : NULL;
        char bus[32] = "";
        if (p)
            snprintf(bus, sizeof(bus), "%04x:%02x:%02x.%x", p->attr->pcidev.domain,
                     p->attr->pcidev.bus, p->attr->pcidev.dev, p->attr->pcidev.func);
        cJSON_AddStringToObject(e, "bus_id", bus);
        cJSON_AddNumberToObject(e, "numa", p ? obj_numa(t, p) : -1);
        cJSON_AddItemToArray(arr, e);
        if (p && n < max) {
            pci[n++] = p;
            cJSON_AddItemToArray(cols, cJSON_CreateString(o->name ? o->name : "?"));
        }
    }
    cJSON *other = cJSON_AddArrayToObject(host, "other_interfaces");
    struct if_nameindex *ifs = if_nameindex();
    for (struct if_nameindex *i = ifs; i && i->if_index; i++) {
        int known = strcmp(i->if_name, "lo") == 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, arr)
        {
            known |= strcmp(cJSON_GetObjectItem(e, "name")->valuestring, i->if_name) == 0;
        }
        if (!known)
            cJSON_AddItemToArray(other, cJSON_CreateString(i->if_name));
    }
    if (ifs)
        if_freenameindex(ifs);
    return n;
}

static void add_paths(hwloc_topology_t t, cJSON *host, const dl_gpus_t *g, const topo_gpu_t *gp,
                      int ng, hwloc_obj_t *nic, int nn)
{
    cJSON *gg = cJSON_AddArrayToObject(host, "gpu_gpu"), *gn = cJSON_AddArrayToObject(host, "gpu_nic");
    for (int i = 0; i < ng; i++) {
        cJSON *row = cJSON_CreateArray();
        for (int j = 0; j < ng; j++) {
            char p[16] = "X";
            int nv = gp[i].nvml >= 0 && gp[j].nvml >= 0 ? nvlinks_between(g, gp[i].nvml, gp[j].nvml) : 0;
            if (i != j && nv)
                snprintf(p, sizeof(p), "NV%d", nv);
            else if (i != j)
                snprintf(p, sizeof(p), "%s", gp[i].obj && gp[j].obj ? pci_path(t, gp[i].obj, gp[j].obj) : "?");
            cJSON_AddItemToArray(row, cJSON_CreateString(p));
        }
        cJSON_AddItemToArray(gg, row);
        row = cJSON_CreateArray();
        for (int k = 0; k < nn; k++)
            cJSON_AddItemToArray(row, cJSON_CreateString(gp[i].obj ? pci_path(t, gp[i].obj, nic[k]) : "?"));
        cJSON_AddItemToArray(gn, row);
    }
}

cJSON *dl_sys_topo(const dl_gpus_t *gpus)
{
    hwloc_topology_t t = load();
    cJSON *host = cJSON_CreateObject();
    char name[256] = "";
    gethostname(name, sizeof(name) - 1);
    cJSON_AddStringToObject(host, "host", name);
    if (!t) {
        cJSON_AddStringToObject(host, "error", "hwloc could not load this host's topology");
        return host;
    }
    add_numa(t, host);
    topo_gpu_t gp[DL_GPU_MAX];
    int ng = find_gpus(t, gpus, gp, DL_GPU_MAX);
    cJSON *ga = cJSON_AddArrayToObject(host, "gpus");
    for (int i = 0; i < ng; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "index", i);
        cJSON_AddStringToObject(e, "name", gp[i].name);
        cJSON_AddStringToObject(e, "bus_id", gp[i].bus_id);
        cJSON_AddNumberToObject(e, "numa", gp[i].obj ? obj_numa(t, gp[i].obj) : -1);
        if (gp[i].nvml >= 0)
            cJSON_AddNumberToObject(e, "nvlinks_up", gpus->gpu[gp[i].nvml].nvlink_up);
        cJSON_AddItemToArray(ga, e);
    }
    hwloc_obj_t nic[32];
    int nn = add_nics(t, host, nic, 32);
    add_paths(t, host, gpus, gp, ng, nic, nn);
    hwloc_topology_destroy(t);
    return host;
}
