/* Checks of each host before any traffic: NUMA binding of each rank, GPU
 * health through NVML. Facts are taken where they live (each rank, each
 * host's first rank) and judged on rank 0, which names the host. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sys/sys.h"

static cJSON *my_binding(pf_ctx_t *c, const dl_gpus_t *g)
{
    unsigned long long mask = 0;
    int nnuma = 0;
    char cpus[256] = "";
    int all = dl_sys_binding_numa(&mask, &nnuma, cpus, sizeof(cpus));
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rank", c->rank);
    cJSON_AddStringToObject(o, "cpus", cpus);
    cJSON_AddNumberToObject(o, "numa_mask", (double)mask);
    cJSON_AddNumberToObject(o, "numa_nodes", nnuma);
    cJSON_AddBoolToObject(o, "unbound", all == 1);
    int local = c->lay.dev_local;
    if (g && g->count) { /* the GPU a rank uses: local rank modulo GPUs */
        const dl_gpu_t *mine = &g->gpu[local % g->count];
        cJSON_AddNumberToObject(o, "gpu", mine->index);
        cJSON_AddStringToObject(o, "gpu_bus_id", mine->bus_id);
        cJSON_AddNumberToObject(o, "gpu_numa", dl_sys_pci_numa(mine->bus_id));
    }
    return o;
}

static int popcount64(unsigned long long m) { return __builtin_popcountll(m); }

static void judge_binding(pf_ctx_t *c, const cJSON *b)
{
    int r = cJSON_GetObjectItem(b, "rank")->valueint, h = c->lay.host_of[r];
    unsigned long long mask = (unsigned long long)cJSON_GetObjectItem(b, "numa_mask")->valuedouble;
    int nnuma = cJSON_GetObjectItem(b, "numa_nodes")->valueint;
    const cJSON *gn = cJSON_GetObjectItem(b, "gpu_numa");
    const char *cpus = cJSON_GetObjectItem(b, "cpus")->valuestring;
    char subject[300];
    snprintf(subject, sizeof(subject), "%s rank%d", c->lay.names[h], r);
    const cJSON *gi = cJSON_GetObjectItem(b, "gpu"), *gb = cJSON_GetObjectItem(b, "gpu_bus_id");
    if (c->gpu_of && r >= 0 && r < c->nranks && cJSON_IsNumber(gi)) { /* named if it straggles */
        c->gpu_of[r] = gi->valueint;
        snprintf(c->bus_of[r], DL_PF_BUS_LEN, "%s", cJSON_IsString(gb) ? gb->valuestring : "");
    }
    cJSON *f = cJSON_Duplicate(b, 1);
    if (nnuma <= 1) {
        pf_check(c, DL_PF_PASS, "numa", "rank", subject, f, "one NUMA node on this host (cpus %s)", cpus);
    } else if (gn && gn->valueint >= 0) {
        int want = gn->valueint, ok = mask == (1ULL << want);
        pf_check(c, ok ? DL_PF_PASS : DL_PF_WARN, "numa", "rank", subject, f,
                 ok ? "cpus %s on NUMA node %d, its GPU's node"
                    : "cpus %s not on NUMA node %d of its GPU: bind with mpirun --bind-to numa "
                      "--map-by ppr:N:numa, or numactl --cpunodebind=%d",
                 cpus, want, want);
    } else if (cJSON_IsTrue(cJSON_GetObjectItem(b, "unbound"))) {
        pf_check(c, DL_PF_WARN, "numa", "rank", subject, f,
                 "unbound (cpus %s span %d NUMA nodes): mpirun --bind-to numa --map-by ppr:N:numa, "
                 "or numactl --cpunodebind=N", cpus, nnuma);
    } else {
        int one = popcount64(mask) == 1;
        pf_check(c, one ? DL_PF_PASS : DL_PF_WARN, "numa", "rank", subject, f,
                 one ? "cpus %s within one NUMA node"
                     : "cpus %s span several NUMA nodes: mpirun --bind-to numa --map-by ppr:N:numa",
                 cpus);
    }
}

dl_status_t pf_host_checks(pf_ctx_t *c)
{
    pf_step("host checks");
    int first = c->lay.local_of[c->rank] == 0;
    dl_gpus_t *g = calloc(1, sizeof(*g));
    char why[256] = "GPU checks turned off (--no-gpu)";
    int have = g && c->o->gpu_checks && dl_sys_gpus(g, why, sizeof(why)) == DL_OK;
    /* Every rank: its binding. The host's first rank: its GPUs and topo. */
    cJSON *bind = my_binding(c, have ? g : NULL);
    cJSON *all_bind = dl_sys_gather_json(c->world, bind);
    cJSON *mine = NULL;
    if (first) {
        mine = cJSON_CreateObject();
        cJSON_AddNumberToObject(mine, "host", c->lay.host_of[c->rank]);
        cJSON_AddStringToObject(mine, "nvml", have ? "ok" : why);
        cJSON *arr = cJSON_AddArrayToObject(mine, "gpus");
        for (int i = 0; have && i < g->count; i++)
            cJSON_AddItemToArray(arr, dl_gpu_json(&g->gpu[i]));
    }
    cJSON *all_gpu = dl_sys_gather_json(c->world, mine);
    cJSON *topo = dl_sys_topo_job(c->world);
    if (c->rank == 0) {
        const cJSON *e;
        cJSON_ArrayForEach(e, all_bind)
        {
            judge_binding(c, e);
        }
        cJSON_ArrayForEach(e, all_gpu)
        {
            pf_gpu_judge(c, cJSON_GetObjectItem(e, "host")->valueint, e);
        }
        cJSON_AddItemToObject(c->doc, "topo", topo);
        topo = NULL;
    }
    cJSON_Delete(bind);
    cJSON_Delete(mine);
    cJSON_Delete(all_bind);
    cJSON_Delete(all_gpu);
    cJSON_Delete(topo);
    dl_status_t st = pf_gpu_copy_checks(c, have ? g : NULL);
    free(g);
    return st;
}
