/* Measures one GPU's copies with the CUDA runtime (built with the nccl
 * backend, which links it): a D2D copy between two device buffers, and
 * H2D / D2H from a host buffer bound to the rank's NUMA node (hwloc) and
 * then pinned (cudaHostRegister), each timed by events around every copy,
 * the median of the repeats kept. Every wait polls against a deadline. */
#include "gpucopy.h"

#include <stdio.h>
#include <string.h>

#ifdef DL_HAVE_NCCL

#include <cuda_runtime_api.h>
#include <hwloc.h>
#include <stdlib.h>
#include <time.h>

#include "../sys/sys.h"

typedef struct {
    hwloc_topology_t topo;
    hwloc_obj_t node;       /* where the host buffer is bound; NULL: unbound */
    void *host, *dev[2];
    int registered;
    cudaStream_t stream;
    cudaEvent_t ev[2];
    int nev;
} gc_bufs_t;

static dl_status_t cuda_bad(dl_gc_result_t *r, const char *what, cudaError_t e)
{
    snprintf(r->why, sizeof(r->why), "%s: %s", what, cudaGetErrorString(e));
    return DL_ERR_COMM;
}
#define GC_TRY(call)                                    \
    do {                                                \
        cudaError_t e_ = (call);                        \
        if (e_ != cudaSuccess)                          \
            return cuda_bad(r, #call, e_);              \
    } while (0)

/* hwloc logical index of the one NUMA node of a nodeset, -1 if not one. */
static int node_of(hwloc_topology_t t, hwloc_const_nodeset_t ns)
{
    if (hwloc_bitmap_weight(ns) != 1)
        return -1;
    hwloc_obj_t n = hwloc_get_numanode_obj_by_os_index(t, (unsigned)hwloc_bitmap_first(ns));
    return n ? (int)n->logical_index : -1;
}

/* The rank's NUMA node: the one node its CPU binding covers, -1 if it
 * spans several (unbound). */
static int rank_node(hwloc_topology_t t)
{
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), ns = hwloc_bitmap_alloc();
    int n = -1;
    if (hwloc_get_cpubind(t, cpus, HWLOC_CPUBIND_PROCESS) == 0) {
        hwloc_cpuset_to_nodeset(t, cpus, ns);
        n = node_of(t, ns);
    }
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(ns);
    return n;
}

static void where_it_ran(gc_bufs_t *b, size_t bytes, dl_gc_result_t *r)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), ns = hwloc_bitmap_alloc();
    if (hwloc_get_area_memlocation(b->topo, b->host, bytes, set, HWLOC_MEMBIND_BYNODESET) == 0)
        r->mem_numa = node_of(b->topo, set);
    if (hwloc_get_last_cpu_location(b->topo, set, HWLOC_CPUBIND_THREAD) == 0) {
        hwloc_cpuset_to_nodeset(b->topo, set, ns);
        r->cpu_numa = node_of(b->topo, ns);
    }
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(ns);
}

/* The host buffer: on the rank's node, or the GPU's when the rank is not
 * bound to one (then the link itself is measured), touched, then pinned. */
static dl_status_t host_buffer(gc_bufs_t *b, size_t bytes, dl_gc_result_t *r)
{
    int want = r->rank_numa >= 0 ? r->rank_numa : r->gpu_numa;
    b->node = want >= 0 ? hwloc_get_obj_by_type(b->topo, HWLOC_OBJ_NUMANODE, (unsigned)want) : NULL;
    b->host = b->node ? hwloc_alloc_membind(b->topo, bytes, b->node->nodeset, HWLOC_MEMBIND_BIND,
                                            HWLOC_MEMBIND_BYNODESET)
                      : NULL;
    if (!b->host) /* binding refused (a container may forbid it): mem_numa says where it went */
        b->host = hwloc_alloc(b->topo, bytes);
    if (!b->host) {
        snprintf(r->why, sizeof(r->why), "cannot allocate %zu bytes of host memory", bytes);
        return DL_ERR_NOMEM;
    }
    memset(b->host, 0x5a, bytes);
    GC_TRY(cudaHostRegister(b->host, bytes, cudaHostRegisterDefault));
    b->registered = 1;
    return DL_OK;
}

static dl_status_t wait_event(cudaEvent_t ev, dl_gc_result_t *r)
{
    double until = dl_now() + DL_GC_DEADLINE_S;
    for (;;) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess)
            return DL_OK;
        if (e != cudaErrorNotReady)
            return cuda_bad(r, "cudaEventQuery", e);
        if (dl_now() > until) {
            snprintf(r->why, sizeof(r->why), "a %llu-byte copy did not finish in %.0f s",
                     (unsigned long long)r->bytes, DL_GC_DEADLINE_S);
            return DL_ERR_TIMEOUT;
        }
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One untimed copy, then `repeats` timed ones; the median rate in GB/s. */
static dl_status_t time_copy(gc_bufs_t *b, void *dst, const void *src, enum cudaMemcpyKind kind,
                             dl_gc_result_t *r, double *gbps)
{
    double t[64];
    int n = r->repeats < 64 ? r->repeats : 64;
    for (int i = -1; i < n; i++) {
        GC_TRY(cudaEventRecord(b->ev[0], b->stream));
        GC_TRY(cudaMemcpyAsync(dst, src, r->bytes, kind, b->stream));
        GC_TRY(cudaEventRecord(b->ev[1], b->stream));
        dl_status_t st = wait_event(b->ev[1], r);
        if (st != DL_OK)
            return st;
        float ms = 0;
        GC_TRY(cudaEventElapsedTime(&ms, b->ev[0], b->ev[1]));
        if (i >= 0)
            t[i] = ms > 0 ? ms * 1e-3 : 1e-9;
    }
    qsort(t, (size_t)n, sizeof(t[0]), cmp_double);
    double mid = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    *gbps = (double)r->bytes / mid / 1e9;
    return DL_OK;
}

static dl_status_t measure(gc_bufs_t *b, dl_gc_result_t *r)
{
    GC_TRY(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
    for (; b->nev < 2; b->nev++)
        GC_TRY(cudaEventCreate(&b->ev[b->nev]));
    GC_TRY(cudaMalloc(&b->dev[0], r->bytes));
    GC_TRY(cudaMalloc(&b->dev[1], r->bytes));
    GC_TRY(cudaMemsetAsync(b->dev[0], 0x33, r->bytes, b->stream));
    dl_status_t st = host_buffer(b, r->bytes, r);
    if (st == DL_OK)
        st = time_copy(b, b->dev[1], b->dev[0], cudaMemcpyDeviceToDevice, r, &r->gbps[DL_GC_D2D]);
    if (st == DL_OK)
        st = time_copy(b, b->dev[0], b->host, cudaMemcpyHostToDevice, r, &r->gbps[DL_GC_H2D]);
    if (st == DL_OK)
        st = time_copy(b, b->host, b->dev[1], cudaMemcpyDeviceToHost, r, &r->gbps[DL_GC_D2H]);
    if (st == DL_OK)
        where_it_ran(b, r->bytes, r);
    return st;
}

/* Undoes what was made, in reverse; after a missed deadline the device may
 * still be copying, so nothing of it is freed (the process ends soon). */
static void release(gc_bufs_t *b, size_t bytes, dl_status_t st)
{
    if (st != DL_ERR_TIMEOUT) {
        if (b->registered)
            cudaHostUnregister(b->host);
        for (int i = 0; i < 2; i++)
            if (b->dev[i])
                cudaFree(b->dev[i]);
        for (int i = 0; i < b->nev; i++)
            cudaEventDestroy(b->ev[i]);
        if (b->stream)
            cudaStreamDestroy(b->stream);
        if (b->host)
            hwloc_free(b->topo, b->host, bytes);
        cudaDeviceReset(); /* the primary context: workers may need the GPU alone */
    }
    hwloc_topology_destroy(b->topo);
}

dl_status_t dl_gc_device(int local_rank, int *device, char *bus_id, size_t len, char *why,
                         size_t wlen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        dl_no_gpu_why(e != cudaSuccess ? cudaGetErrorString(e) : "0 devices", why, wlen);
        return DL_ERR_UNAVAILABLE;
    }
    *device = local_rank % n; /* the nccl backend's choice */
    e = cudaDeviceGetPCIBusId(bus_id, (int)len, *device);
    if (e != cudaSuccess) {
        snprintf(why, wlen, "cudaDeviceGetPCIBusId: %s", cudaGetErrorString(e));
        return DL_ERR_COMM;
    }
    for (char *p = bus_id; *p; p++) /* hwloc and NVML spell it in lower case */
        if (*p >= 'A' && *p <= 'F')
            *p = (char)(*p - 'A' + 'a');
    return DL_OK;
}

dl_status_t dl_gc_measure(int local_rank, uint64_t bytes, int repeats, dl_gc_result_t *r)
{
    memset(r, 0, sizeof(*r));
    r->device = r->gpu_numa = r->rank_numa = r->mem_numa = r->cpu_numa = -1;
    r->bytes = bytes;
    r->repeats = repeats < 1 ? 1 : repeats;
    for (int k = 0; k < DL_GC_NKINDS; k++)
        r->gbps[k] = -1;
    dl_status_t st = dl_gc_device(local_rank, &r->device, r->bus_id, sizeof(r->bus_id), r->why,
                                  sizeof(r->why));
    if (st != DL_OK)
        return st;
    GC_TRY(cudaSetDevice(r->device));
    gc_bufs_t b = {0};
    if (hwloc_topology_init(&b.topo) != 0 || hwloc_topology_load(b.topo) != 0) {
        if (b.topo)
            hwloc_topology_destroy(b.topo);
        snprintf(r->why, sizeof(r->why), "hwloc cannot read this host's topology");
        return DL_ERR_INTERNAL;
    }
    r->gpu_numa = dl_sys_pci_numa(r->bus_id);
    r->rank_numa = rank_node(b.topo);
    st = measure(&b, r);
    release(&b, bytes, st);
    return st;
}

#else

dl_status_t dl_gc_device(int local_rank, int *device, char *bus_id, size_t len, char *why,
                         size_t wlen)
{
    *device = -1;
    if (len)
        bus_id[0] = 0;
    snprintf(why, wlen, "built without CUDA (no nccl backend): copy bandwidth is not measured");
    return DL_ERR_UNAVAILABLE;
}

dl_status_t dl_gc_measure(int local_rank, uint64_t bytes, int repeats, dl_gc_result_t *r)
{
    memset(r, 0, sizeof(*r));
    r->device = r->gpu_numa = r->rank_numa = r->mem_numa = r->cpu_numa = -1;
    r->bytes = bytes;
    r->repeats = repeats;
    for (int k = 0; k < DL_GC_NKINDS; k++)
        r->gbps[k] = -1;
    snprintf(r->why, sizeof(r->why),
             "built without CUDA (no nccl backend): copy bandwidth is not measured");
    return DL_ERR_UNAVAILABLE;
}

#endif
