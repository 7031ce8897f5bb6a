/* Per-rank judgement: one slow rank of eight on a host drags the world
 * figures down without making any host, rail or pair an outlier (its own
 * host is the slow one only against other hosts, and one host has no
 * peers). The world figures time each rank's arrival into the calls (and
 * its own time), the sweep's straggler rule names the suspects, and a
 * suspect is measured again before it is named with its host and GPU. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dl_status_t pf_ranks_init(pf_ctx_t *c)
{
    if (c->rank != 0)
        return DL_OK;
    c->gpu_of = malloc((size_t)c->nranks * sizeof(int));
    c->bus_of = calloc((size_t)c->nranks, DL_PF_BUS_LEN);
    if (!c->gpu_of || !c->bus_of)
        return DL_ERR_NOMEM;
    for (int r = 0; r < c->nranks; r++)
        c->gpu_of[r] = -1;
    return dl_rank_tally_init(&c->late, c->nranks, c->lay.host_of, NULL);
}

void pf_ranks_free(pf_ctx_t *c)
{
    dl_rank_tally_free(&c->late);
    free(c->gpu_of);
    free(c->bus_of);
    c->gpu_of = NULL;
    c->bus_of = NULL;
}

void pf_ranks_add(pf_ctx_t *c, const dl_result_t *r)
{
    if (c->rank == 0)
        dl_rank_tally_add(&c->late, r);
}

void pf_rank_gpu(const pf_ctx_t *c, int rank, char *buf, size_t len)
{
    if (c->gpu_of && c->gpu_of[rank] >= 0)
        snprintf(buf, len, "gpu%d%s%s", c->gpu_of[rank], c->bus_of[rank][0] ? " " : "",
                 c->bus_of[rank]);
    else
        snprintf(buf, len, "no GPU");
}

/* One world all-reduce at the correctness size, arrivals timed: whether
 * each suspect is still named in it (again[r] cleared where not). */
static dl_status_t retest(pf_ctx_t *c, int *again, double *late_us)
{
    dl_xcomm_t x;
    dl_xcomm_mpi_init(&x, &c->world);
    pf_be_t b;
    dl_status_t st = pf_be_open(c, &x, c->o->check_bytes, &b);
    dl_result_t r;
    pf_size_t sz;
    memset(&r, 0, sizeof(r));
    if (st == DL_OK)
        st = pf_measure_sized(c, &b, &x, DL_COLL_ALLREDUCE, c->o->check_bytes, &r, &sz);
    if (st != DL_OK)
        st = pf_faults(c, st, "stragglers retest");
    if (st == DL_OK && c->rank == 0 && r.rank_late_s && r.rank_mean_s) {
        int *late = calloc((size_t)c->nranks, sizeof(int)), *slow = calloc((size_t)c->nranks, sizeof(int));
        double med = dl_median(r.rank_late_s, (size_t)c->nranks);
        if (late && slow) {
            dl_result_stragglers(&r, late);
            dl_result_slow_ranks(&r, c->lay.host_of, slow, NULL);
        }
        for (int k = 0; k < c->nranks; k++) {
            again[k] = again[k] && late && slow && (late[k] || slow[k]);
            late_us[k] = (r.rank_late_s[k] - med) * 1e6;
        }
        free(late);
        free(slow);
    } else if (st == DL_OK && c->rank == 0) { /* nothing fitted: nothing to confirm by */
        memset(again, 0, (size_t)c->nranks * sizeof(int));
    }
    dl_result_free(&r);
    pf_be_close(c, &b);
    return st;
}

static cJSON *record(pf_ctx_t *c, int rank, const dl_rank_why_t *w, int confirmed, double again_us)
{
    cJSON *a = cJSON_GetObjectItem(c->doc, "stragglers");
    if (!a)
        a = cJSON_AddArrayToObject(c->doc, "stragglers");
    cJSON *e = cJSON_CreateObject();
    int h = c->lay.host_of[rank];
    cJSON_AddNumberToObject(e, "rank", rank);
    cJSON_AddStringToObject(e, "host", c->lay.names[h]);
    if (c->gpu_of[rank] >= 0) {
        cJSON_AddNumberToObject(e, "gpu", c->gpu_of[rank]);
        cJSON_AddStringToObject(e, "bus_id", c->bus_of[rank]);
    } else {
        cJSON_AddNullToObject(e, "gpu");
    }
    cJSON_AddNumberToObject(e, "rows", w->rows);
    cJSON_AddNumberToObject(e, "late_rows", w->late_rows);
    cJSON_AddNumberToObject(e, "late_us", w->late_s * 1e6);
    cJSON_AddNumberToObject(e, "slow_rows", w->slow_rows);
    if (w->slow_rows)
        cJSON_AddNumberToObject(e, "slow_ratio", w->slow_ratio);
    cJSON_AddNumberToObject(e, "retest_late_us", again_us);
    cJSON_AddBoolToObject(e, "confirmed", confirmed);
    cJSON_AddItemToArray(a, e);
    return e;
}

/* rank 0: one line per suspect, named when every retest kept it. */
static void judge(pf_ctx_t *c, const int *suspect, const int *again, const double *again_us)
{
    for (int k = 0; k < c->nranks; k++) {
        if (!suspect[k])
            continue;
        dl_rank_why_t w;
        char why[256], gpu[64], subject[300];
        dl_rank_tally_named(&c->late, k, &w);
        dl_rank_why_text(&w, "world figures", why, sizeof(why));
        pf_rank_gpu(c, k, gpu, sizeof(gpu));
        int h = c->lay.host_of[k];
        snprintf(subject, sizeof(subject), "%s rank%d", c->lay.names[h], k);
        cJSON *f = cJSON_Duplicate(record(c, k, &w, again[k], again_us[k]), 1);
        if (again[k])
            pf_blame_rank(c, k);
        pf_check(c, again[k] ? DL_PF_FAIL : DL_PF_WARN, "straggler", "rank", subject, f,
                 "rank %d (%s, %s) %s; again (last of %d): late by %.1f us (%s)",
                 k, c->lay.names[h], gpu, why, PF_RETESTS, again_us[k],
                 again[k] ? "confirmed" : "not confirmed: noise");
    }
}

/* Rank 0's suspects, to every rank: the retests are collectives. */
static int suspects(pf_ctx_t *c, int *suspect)
{
    int n = 0;
    for (int k = 0; c->rank == 0 && k < c->nranks; k++) {
        dl_rank_why_t w;
        suspect[k] = dl_rank_tally_named(&c->late, k, &w);
        n += suspect[k];
    }
    MPI_Bcast(&n, 1, MPI_INT, 0, c->world);
    MPI_Bcast(suspect, c->nranks, MPI_INT, 0, c->world);
    return n;
}

static void pass_line(pf_ctx_t *c)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddNumberToObject(f, "rows", c->late.rows);
    cJSON_AddNumberToObject(f, "ranks", c->nranks);
    pf_check(c, DL_PF_PASS, "straggler", "rank", "-", f,
             "no rank late into the calls or slow beside its host's ranks in %d world figures, "
             "%d ranks", c->late.rows, c->nranks);
}

dl_status_t pf_ranks(pf_ctx_t *c)
{
    int rows = c->rank == 0 ? c->late.rows : 0;
    MPI_Bcast(&rows, 1, MPI_INT, 0, c->world);
    if (c->nranks < 3 || rows == 0) {
        pf_check(c, DL_PF_SKIP, "straggler", "rank", "-", NULL, "%s",
                 c->nranks < 3 ? "fewer than 3 ranks: two cannot say which one is off"
                               : "no world figure timed the ranks' arrivals");
        return DL_OK;
    }
    int *suspect = calloc((size_t)c->nranks, sizeof(int)), *again = calloc((size_t)c->nranks, sizeof(int));
    double *again_us = calloc((size_t)c->nranks, sizeof(double));
    dl_status_t st = suspect && again && again_us ? DL_OK : DL_ERR_NOMEM;
    int n = st == DL_OK ? suspects(c, suspect) : 0;
    if (st == DL_OK && n == 0)
        pass_line(c);
    if (st == DL_OK && n) {
        memcpy(again, suspect, (size_t)c->nranks * sizeof(int));
        c->arrivals = 1;
        for (int t = 0; st == DL_OK && t < PF_RETESTS; t++) {
            pf_step("straggler retest");
            st = retest(c, again, again_us);
        }
        c->arrivals = 0;
        if (st == DL_OK && c->rank == 0)
            judge(c, suspect, again, again_us);
    }
    free(suspect);
    free(again);
    free(again_us);
    return st;
}
