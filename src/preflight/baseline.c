/* Baseline rows from an earlier dlcomm run (run.json). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int str_is(const cJSON *o, const char *key, const char *want)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && strcmp(v->valuestring, want) == 0;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The best busbw among matching rows of every profile: a baseline is what
 * the system can do, and the best profile says that. Only float32 sum
 * out-of-place rows match, as preflight measures those. */
double pf_baseline_busbw(const cJSON *run, const char *coll, uint64_t bytes, int ranks)
{
    double best = -1;
    const cJSON *prof, *row;
    cJSON_ArrayForEach(prof, cJSON_GetObjectItemCaseSensitive(run, "profiles"))
    {
        cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(prof, "results"))
        {
            if (!str_is(row, "collective", coll) || !str_is(row, "dtype", "float32") ||
                str_is(row, "placement", "in") || num(row, "ranks") != ranks ||
                num(row, "bytes") != (double)bytes)
                continue;
            if (!str_is(row, "op", "sum") && !str_is(row, "op", "none"))
                continue;
            double b = num(row, "busbw_gbps");
            best = b > best ? b : best;
        }
    }
    return best;
}

/* The sim backend's model of a system description, asked in-process for
 * one case at the job's node count (ranks = nodes x the file's GPUs per
 * node). NCCL_DEBUG_FILE is hidden meanwhile: the model would emulate a
 * debug log into it, and that file belongs to the user's real runs. */
double pf_model_busbw(const char *system, int nhosts, dl_coll_id_t coll, uint64_t bytes)
{
    const dl_backend_ops_t *sim = dl_backend_find("sim");
    int nodes = 0, gpn = 0;
    if (!sim || dl_sim_system_check(system, &nodes, &gpn) != DL_OK || gpn < 1)
        return -1;
    int m = nhosts * gpn;
    /* The model's options through its own table, as a command line would give them. */
    char nodes_s[16];
    snprintf(nodes_s, sizeof(nodes_s), "%d", nhosts);
    char *args[] = {"--system", (char *)system, "--sim-nodes", nodes_s};
    void *opts = calloc(1, sim->opts_size);
    int help = 0;
    if (!opts || dl_opts_parse(sim->opts, sim->nopts, opts, 4, args, NULL, 0, NULL, &help) != DL_OK) {
        free(opts);
        return -1;
    }
    dl_backend_cfg_t cfg = {.rank = 0, .nranks = m, .opts = opts, .profile_name = "preflight"};
    char *dbg = getenv("NCCL_DEBUG_FILE") ? strdup(getenv("NCCL_DEBUG_FILE")) : NULL;
    unsetenv("NCCL_DEBUG_FILE");
    void *ctx = NULL;
    dl_status_t st = sim->init(&cfg, &ctx);
    if (dbg)
        setenv("NCCL_DEBUG_FILE", dbg, 1);
    free(dbg);
    free(opts); /* read at init only */
    if (st != DL_OK)
        return -1;
    dl_case_t cs;
    dl_case_init(&cs, dl_colls[coll], DL_DT_FLOAT32, DL_OP_SUM, DL_PLACE_OUT, 0, bytes, m, 0);
    double total = 0;
    st = sim->run(ctx, &cs, 16, NULL, &total);
    sim->fini(ctx);
    return st == DL_OK && total > 0 ? dl_busbw(cs.coll, m, cs.counts.bytes, total / 16) : -1;
}
