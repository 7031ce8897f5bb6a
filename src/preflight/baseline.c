/* Baseline rows from an earlier run, read by the analysis module's reader
 * (a dlcomm run.json or nccl-tests output). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The profile a row came from. */
static const dl_prof_t *prof_of(const dl_run_t *run, const dl_row_t *row)
{
    for (size_t i = 0; i < run->nprofs; i++)
        if (strcmp(run->profs[i].name, row->profile) == 0)
            return &run->profs[i];
    return NULL;
}

/* The best busbw among matching rows of every profile: a baseline is what
 * the system can do, and the best profile says that. Only float32 sum
 * out-of-place rows match, as preflight measures those; and only rows
 * measured (not modelled) by the backend this preflight measures with: a
 * model's or another backend's figure says nothing of this one's, at any
 * rank count (a model's rows carry the model's). When rows match but none
 * is comparable, why says so. */
double pf_baseline_busbw(const dl_run_t *run, const char *backend, const char *coll,
                         uint64_t bytes, int ranks, char *why, size_t whylen)
{
    double best = -1;
    int modelled = 0;
    const char *other = NULL;
    why[0] = '\0';
    for (size_t i = 0; i < run->nrows; i++) {
        const dl_row_t *row = &run->rows[i];
        if (strcmp(row->collective, coll) != 0 || strcmp(row->dtype, "float32") != 0 ||
            strcmp(row->placement, "in") == 0 || row->bytes != bytes ||
            (strcmp(row->op, "sum") != 0 && strcmp(row->op, "none") != 0) || !(row->busbw >= 0))
            continue;
        const dl_prof_t *pr = prof_of(run, row);
        const char *be = pr ? pr->backend : "";
        if (row->modelled || (pr && pr->modelled) || strcmp(be, "sim") == 0) {
            modelled = 1;
            continue;
        }
        if (strcmp(be, backend) != 0) {
            other = be[0] ? be : "an unknown backend";
            continue;
        }
        if (row->ranks != ranks) /* a model's ranks are its own: its rows are judged above */
            continue;
        best = row->busbw > best ? row->busbw : best;
    }
    if (best < 0 && modelled)
        snprintf(why, whylen, "not comparable: the baseline row is modelled (sim backend), "
                              "not measured");
    else if (best < 0 && other)
        snprintf(why, whylen, "not comparable: the baseline row is from %s, this preflight "
                              "measures %s", other, backend);
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
