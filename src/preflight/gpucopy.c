/* What a GPU's copies should reach, how a figure is judged, and the
 * preflight check that measures each rank's GPU and judges it on rank 0.
 * The measuring itself is in gpucopy_cuda.c. */
#include "gpucopy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../sys/sys.h"
#include "../sys/system.h"
#include "internal.h"

const char *const dl_gc_check_names[DL_GC_NKINDS] = {"gpu-copy", "h2d", "d2h"};
/* The figures' keys in a rank's record. */
static const char *const keys[DL_GC_NKINDS] = {"d2d_gbps", "h2d_gbps", "d2h_gbps"};

double dl_gc_pcie_gbps(int gen, int width)
{
    static const double gts[] = {0, 2.5, 5, 8, 16, 32, 64};
    if (gen < 1 || gen > 6 || width < 1)
        return -1;
    double enc = gen <= 2 ? 8.0 / 10 : gen <= 5 ? 128.0 / 130 : 236.0 / 256;
    return gts[gen] * width * enc / 8;
}

void dl_gc_system_from(const dl_system_t *sys, dl_gc_system_t *s)
{
    s->memory_gbyte_s = sys ? sys->gpu_memory_gbyte_s : -1;
    s->host_link_gbyte_s = sys ? sys->gpu_host_link_gbyte_s : -1;
}

void dl_gc_expect(dl_gc_kind_t k, const dl_gc_system_t *s, int gen_max, int width_max,
                  dl_gc_expect_t *e)
{
    e->gbps = -1;
    if (k == DL_GC_D2D) {
        if (s && s->memory_gbyte_s > 0) {
            e->gbps = s->memory_gbyte_s / 2 * DL_GC_HBM_EFFICIENCY;
            snprintf(e->source, sizeof(e->source),
                     "system gpu.memory_gbyte_s %.0f / 2 (read + write) x %.2f", s->memory_gbyte_s,
                     DL_GC_HBM_EFFICIENCY);
        } else {
            snprintf(e->source, sizeof(e->source),
                     "none: no --system with gpu.memory_gbyte_s");
        }
        return;
    }
    double line = dl_gc_pcie_gbps(gen_max, width_max);
    if (s && s->host_link_gbyte_s > 0) {
        e->gbps = s->host_link_gbyte_s * DL_GC_PCIE_EFFICIENCY;
        snprintf(e->source, sizeof(e->source), "system gpu.host_link_gbyte_s %.1f x %.2f",
                 s->host_link_gbyte_s, DL_GC_PCIE_EFFICIENCY);
    } else if (line > 0) {
        e->gbps = line * DL_GC_PCIE_EFFICIENCY;
        snprintf(e->source, sizeof(e->source), "NVML max PCIe gen%d x%d = %.1f GB/s x %.2f",
                 gen_max, width_max, line, DL_GC_PCIE_EFFICIENCY);
    } else {
        snprintf(e->source, sizeof(e->source),
                 "none: no --system with gpu.host_link_gbyte_s, and no PCIe link from NVML");
    }
}

dl_pf_status_t dl_gc_judge(double measured, double expected)
{
    if (expected <= 0)
        return DL_PF_PASS;
    double f = measured / expected;
    return f >= DL_GC_PASS_FRACTION   ? DL_PF_PASS
           : f >= DL_GC_FAIL_FRACTION ? DL_PF_WARN
                                      : DL_PF_FAIL;
}

cJSON *dl_gc_json(const dl_gc_result_t *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "device", r->device);
    cJSON_AddStringToObject(o, "bus_id", r->bus_id);
    cJSON_AddNumberToObject(o, "gpu_numa", r->gpu_numa);
    cJSON_AddNumberToObject(o, "rank_numa", r->rank_numa);
    cJSON_AddNumberToObject(o, "mem_numa", r->mem_numa);
    cJSON_AddNumberToObject(o, "cpu_numa", r->cpu_numa);
    cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
    cJSON_AddNumberToObject(o, "repeats", r->repeats);
    for (int k = 0; k < DL_GC_NKINDS; k++)
        cJSON_AddNumberToObject(o, keys[k], r->gbps[k]);
    cJSON_AddStringToObject(o, "why", r->why);
    return o;
}

/* ---- the preflight check ---- */

static const dl_gpu_t *nvml_gpu(const dl_gpus_t *g, const char *bus_id)
{
    for (int i = 0; g && i < g->count; i++)
        if (strcasecmp(g->gpu[i].bus_id, bus_id) == 0)
            return &g->gpu[i];
    return NULL;
}

/* This rank's figures, with its NVML link and what it was measured as. */
cJSON *pf_gpu_copy_mine(pf_ctx_t *c, const dl_gpus_t *g, int measured_by)
{
    dl_gc_result_t r;
    int local = c->lay.dev_local;
    dl_status_t st = DL_ERR_UNAVAILABLE;
    if (!c->o->gpu_checks || measured_by >= 0) {
        memset(&r, 0, sizeof(r));
        r.device = -1;
        snprintf(r.why, sizeof(r.why), "GPU checks turned off (--no-gpu)");
    }
    if (c->o->gpu_checks && measured_by >= 0) {
        r.shared = 1;
        dl_gc_device(local, &r.device, r.bus_id, sizeof(r.bus_id), r.why, sizeof(r.why));
        snprintf(r.why, sizeof(r.why), "GPU %d (%s) is measured by rank %d", r.device, r.bus_id,
                 measured_by);
    } else if (c->o->gpu_checks) {
        st = dl_gc_measure(local, DL_GC_BYTES, DL_GC_REPEATS, &r);
    }
    cJSON *o = dl_gc_json(&r);
    cJSON_AddNumberToObject(o, "rank", c->rank);
    cJSON_AddStringToObject(o, "outcome", st == DL_OK                ? "measured"
                                          : r.shared                   ? "shared"
                                          : st == DL_ERR_UNAVAILABLE ? "skip"
                                                                     : "broke");
    const dl_gpu_t *n = st == DL_OK ? nvml_gpu(g, r.bus_id) : NULL;
    cJSON_AddNumberToObject(o, "pcie_gen", n ? n->pcie_gen : -1);
    cJSON_AddNumberToObject(o, "pcie_width", n ? n->pcie_width : -1);
    cJSON_AddNumberToObject(o, "pcie_gen_max", n ? n->pcie_gen_max : -1);
    cJSON_AddNumberToObject(o, "pcie_width_max", n ? n->pcie_width_max : -1);
    return o;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* Where the copies' host memory was, as a note on the H2D/D2H lines; a
 * rank whose memory is on another node than its GPU is at least a WARN. */
static int far_memory(const cJSON *e, char *note, size_t len)
{
    int gpu = (int)num(e, "gpu_numa"), mem = (int)num(e, "mem_numa");
    int cpu = (int)num(e, "cpu_numa"), far = gpu >= 0 && mem >= 0 && gpu != mem;
    snprintf(note, len, "host memory on NUMA node %d, CPU on %d, GPU on %d%s", mem, cpu, gpu,
             far ? ": bind the rank to its GPU's node (mpirun --bind-to numa)" : "");
    return far;
}

/* A rank that measured nothing: FAIL when CUDA broke; otherwise one SKIP
 * line for its host (the first rank that says why), none for a rank whose
 * GPU another rank of the host measured. */
static void not_measured(pf_ctx_t *c, const cJSON *e, const char *outcome, char *skipped)
{
    int r = (int)num(e, "rank"), h = c->lay.host_of[r], dev = (int)num(e, "device");
    const char *why = cJSON_GetObjectItem(e, "why")->valuestring;
    const char *bus = cJSON_GetObjectItem(e, "bus_id")->valuestring;
    char subject[300];
    if (strcmp(outcome, "broke") == 0) {
        snprintf(subject, sizeof(subject), "%s rank%d gpu%d", c->lay.names[h], r, dev);
        pf_blame_gpu(c, c->lay.names[h], dev, bus);
        for (int k = 0; k < DL_GC_NKINDS; k++)
            pf_check(c, DL_PF_FAIL, dl_gc_check_names[k], "gpu", subject, cJSON_Duplicate(e, 1),
                     "%s", why);
        return;
    }
    if (strcmp(outcome, "shared") == 0 || skipped[h])
        return;
    skipped[h] = 1;
    pf_check(c, DL_PF_SKIP, "gpu-copy", "host", c->lay.names[h], cJSON_Duplicate(e, 1),
             "%s (gpu-copy, h2d and d2h not measured)", why);
}

void pf_gpu_copy_judge(pf_ctx_t *c, const dl_gc_system_t *sys, const cJSON *e, char *skipped)
{
    int r = (int)num(e, "rank"), h = c->lay.host_of[r];
    const char *outcome = cJSON_GetObjectItem(e, "outcome")->valuestring;
    char subject[300], note[200];
    if (strcmp(outcome, "measured") != 0) {
        not_measured(c, e, outcome, skipped);
        return;
    }
    int dev = (int)num(e, "device"), far = far_memory(e, note, sizeof(note));
    const char *bus = cJSON_GetObjectItem(e, "bus_id")->valuestring;
    snprintf(subject, sizeof(subject), "%s rank%d gpu%d", c->lay.names[h], r, dev);
    for (int k = 0; k < DL_GC_NKINDS; k++) {
        dl_gc_expect_t x;
        dl_gc_expect((dl_gc_kind_t)k, sys, (int)num(e, "pcie_gen_max"),
                     (int)num(e, "pcie_width_max"), &x);
        double got = num(e, keys[k]);
        dl_pf_status_t st = dl_gc_judge(got, x.gbps);
        if (k != DL_GC_D2D && far && st == DL_PF_PASS)
            st = DL_PF_WARN;
        if (st == DL_PF_FAIL)
            pf_blame_gpu(c, c->lay.names[h], dev, bus);
        cJSON *f = cJSON_Duplicate(e, 1);
        cJSON_AddNumberToObject(f, "measured_gbps", got);
        cJSON_AddNumberToObject(f, "expected_gbps", x.gbps);
        cJSON_AddStringToObject(f, "expected_from", x.source);
        char judged[64] = "not judged";
        if (x.gbps > 0)
            snprintf(judged, sizeof(judged), "%.0f%% of %.1f GB/s", 100 * got / x.gbps, x.gbps);
        pf_check(c, st, dl_gc_check_names[k], "gpu", subject, f, "%.1f GB/s, %s (%s)%s%s", got,
                 judged, x.source, k == DL_GC_D2D ? "" : "; ", k == DL_GC_D2D ? "" : note);
    }
}

/* The lowest rank of this machine with this rank's GPU (by bus id) when
 * that is another rank: it measures, this one does not (two at once would
 * halve both figures). -1: this rank measures. Ranks that each see one GPU
 * (CUDA_VISIBLE_DEVICES per rank) have different bus ids and all measure.
 * A machine, not a host: ranks that are NCCL hosts of their own
 * (DLCOMM_SHARED_GPU) may share one GPU, and take the device as the nccl
 * backend does, by their rank on the machine. */
static int measured_by(pf_ctx_t *c)
{
    char bus[32] = "", why[256];
    int dev, by = -1, lrank = 0, lsize = 1;
    MPI_Comm node;
    MPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_size(node, &lsize);
    if (!c->o->gpu_checks || dl_gc_device(c->lay.dev_local, &dev, bus, sizeof(bus), why, sizeof(why)) != DL_OK)
        bus[0] = 0;
    char *all = malloc((size_t)lsize * sizeof(bus));
    int *world = malloc((size_t)lsize * sizeof(int));
    if (all && world) {
        MPI_Allgather(bus, sizeof(bus), MPI_CHAR, all, sizeof(bus), MPI_CHAR, node);
        MPI_Allgather(&c->rank, 1, MPI_INT, world, 1, MPI_INT, node);
        for (int r = 0; r < lrank && by < 0 && bus[0]; r++)
            if (!strcmp(all + r * sizeof(bus), bus))
                by = world[r];
    }
    free(all);
    free(world);
    MPI_Comm_free(&node);
    return by;
}

dl_status_t pf_gpu_copy_checks(pf_ctx_t *c, const dl_gpus_t *g)
{
    pf_step("gpu copy bandwidth");
    cJSON *mine = pf_gpu_copy_mine(c, g, measured_by(c));
    cJSON *all = dl_sys_gather_json(c->world, mine);
    cJSON_Delete(mine);
    if (c->rank == 0) {
        dl_gc_system_t sys;
        dl_gc_system_from(c->o->system, &sys);
        char *skipped = calloc((size_t)c->lay.nhosts, 1);
        const cJSON *e;
        cJSON_ArrayForEach(e, all)
        {
            if (skipped)
                pf_gpu_copy_judge(c, &sys, e, skipped);
        }
        free(skipped);
    }
    cJSON_Delete(all);
    return DL_OK;
}
