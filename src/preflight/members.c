/* Measuring many sub-communicators at once: the concurrency that keeps a
 * scope's cost flat in the node count. */
#include "internal.h"

#include <stdio.h>

#include "../engine/engine.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Waits for every rank of world without spinning: a rank whose member is
 * done (or that sits this round out) must not take the CPU, the PCIe or the
 * memory bandwidth that members still measuring need. */
dl_status_t pf_quiet_barrier(MPI_Comm world)
{
    MPI_Request req;
    int done = 0;
    if (MPI_Ibarrier(world, &req) != MPI_SUCCESS)
        return DL_ERR_COMM;
    struct timespec nap = {0, 2000000}; /* 2 ms: a wake-up costs little */
    while (!done) {
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return DL_ERR_COMM;
        if (!done)
            nanosleep(&nap, NULL);
    }
    return DL_OK;
}

/* Every member's sizing, to every rank: each member's first rank holds it;
 * a member of one rank measured nothing and keeps its asked size. */
static dl_status_t gather_sizes(pf_ctx_t *c, const int *color, int ncolors, pf_size_t *sizes)
{
    for (int m = 0; m < ncolors; m++) {
        int first = -1;
        for (int r = 0; r < c->nranks && first < 0; r++)
            if (color[r] == m)
                first = r;
        if (first >= 0 && MPI_Bcast(&sizes[m], (int)sizeof(pf_size_t), MPI_BYTE, first,
                                    c->world) != MPI_SUCCESS)
            return DL_ERR_COMM;
    }
    return DL_OK;
}

dl_status_t pf_be_open(pf_ctx_t *c, const dl_xcomm_t *x, uint64_t max_bytes, pf_be_t *b)
{
    dl_backend_cfg_t cfg = {.rank = x->rank, .nranks = x->nranks, .xc = x, .opts = c->be_opts,
                            .profile_name = "preflight", .max_bytes = max_bytes,
                            .deadline_s = c->o->timeout_s};
    b->ctx = NULL;
    dl_status_t st = c->be->init(&cfg, &b->ctx);
    /* Injection names world ranks. A session's worker plants it itself. */
    dl_inject_wrap(&b->w, c->be_opts ? NULL : &c->o->inject, c->be, b->ctx, c->rank, NULL);
    return st;
}

void pf_be_close(pf_ctx_t *c, pf_be_t *b)
{
    if (b->ctx)
        c->be->fini(b->ctx);
    b->ctx = NULL;
}

/* One timed call at a size: its time (the slowest rank's, the same on
 * every rank of x) and its busbw. */
static dl_status_t probe(pf_be_t *b, const dl_xcomm_t *x, dl_coll_id_t coll, uint64_t bytes,
                         double *t, double *busbw)
{
    dl_measure_opts_t once = {.warmup = 0, .iters = 1, .min_iters = 1, .max_iters = 1,
                              .ci_target = 1};
    dl_case_t cs;
    dl_result_t r;
    dl_case_init(&cs, dl_colls[coll], DL_DT_FLOAT32, DL_OP_SUM, DL_PLACE_OUT, 0, bytes, x->nranks,
                 x->rank);
    dl_status_t st = dl_measure_case(&b->w.ops, &b->w, x, &once, &cs, &r);
    *t = r.t.max;
    *busbw = r.busbw_gbps;
    dl_result_free(&r);
    return st;
}

double pf_figure_s(const dl_pf_opts_t *o)
{
    return PF_FIGURE_BUDGETS * o->mo.budget_s;
}

/* The calls a figure makes, as the measurement loop runs them (the check,
 * the warm-up, at least min_iters or the fixed count), and its timing budget. */
static void figure_calls(const dl_measure_opts_t *mo, int *calls, double *extra_s)
{
    *calls = 1 + mo->warmup + (mo->iters > 0 ? mo->iters : mo->min_iters) +
             (mo->arrivals ? DL_ARRIVAL_CALLS : 0);
    *extra_s = mo->iters > 0 ? 0 : mo->budget_s;
}

dl_status_t pf_fit(pf_ctx_t *c, pf_be_t *b, const dl_xcomm_t *x, dl_coll_id_t coll,
                   uint64_t bytes, int calls, double extra_s, pf_size_t *sz)
{
    double share = pf_figure_s(c->o), t = 0, bw = 0;
#define COST(per_call) ((calls) * (per_call) + extra_s)
    *sz = (pf_size_t){.asked = bytes, .share_s = share};
    /* A ramp of single calls, 8x each, while the next one's figure would
     * still fit: each costs less than share/calls, so the ramp costs about
     * a quarter share at most, and a slow member never starts a long call. */
    uint64_t p = bytes < PF_PROBE_BYTES ? bytes : PF_PROBE_BYTES, fit = 0;
    dl_status_t st = probe(b, x, coll, p, &t, &bw);
    sz->bound_gbps = bw; /* the first call's figure, should nothing fit */
    for (;;) {
        if (st != DL_OK)
            return st;
        if (COST(t) <= share)
            fit = p; /* measured to fit: a slower call at a larger size keeps this one */
        sz->probe_bytes = p;
        sz->probe_s = t;
        sz->est_s = COST(t * (double)bytes / (double)p);
        if (p >= bytes || sz->est_s <= share || !fit)
            break;
        uint64_t q = p * 8 < bytes ? p * 8 : bytes;
        if (COST(t * (double)q / (double)p) > share)
            break;
        p = q;
        st = probe(b, x, coll, p, &t, &bw);
    }
    if (sz->est_s <= share)
        sz->bytes = bytes;
    else
        sz->bytes = fit; /* 0: even the smallest call does not fit; bound_gbps holds */
#undef COST
    return DL_OK;
}

dl_status_t pf_measure_sized(pf_ctx_t *c, pf_be_t *b, const dl_xcomm_t *x, dl_coll_id_t coll,
                             uint64_t bytes, dl_result_t *r, pf_size_t *sz)
{
    int calls;
    double extra;
    dl_measure_opts_t mo = c->o->mo;
    mo.arrivals = c->arrivals; /* each rank's arrival, for the per-rank judgement */
    figure_calls(&mo, &calls, &extra);
    memset(r, 0, sizeof(*r));
    dl_status_t st = pf_fit(c, b, x, coll, bytes, calls, extra, sz);
    if (st != DL_OK)
        return st;
    dl_case_t cs;
    dl_case_init(&cs, dl_colls[coll], DL_DT_FLOAT32, DL_OP_SUM, DL_PLACE_OUT, 0,
                 sz->bytes ? sz->bytes : sz->probe_bytes, x->nranks, x->rank);
    if (!sz->bytes) {
        r->c = cs;
        r->nranks = x->nranks;
        r->busbw_gbps = sz->bound_gbps;
        return DL_OK;
    }
    return dl_measure_case(&b->w.ops, &b->w, x, &mo, &cs, r);
}

void pf_size_note(const pf_size_t *sz, const char *coll, char *buf, size_t len)
{
    char asked[32], got[32];
    dl_size_format(sz->asked, asked, sizeof(asked));
    dl_size_format(sz->bytes ? sz->bytes : sz->probe_bytes, got, sizeof(got));
    buf[0] = '\0';
    if (!sz->bytes)
        snprintf(buf, len, "below %.3g GB/s: a %s %s took %.2f s, so a %s one would not finish "
                 "in its %.1f s share", sz->bound_gbps, got, coll, sz->probe_s, asked, sz->share_s);
    else if (sz->bytes != sz->asked)
        snprintf(buf, len, "measured at %s: a %s %s would not finish in its %.1f s share "
                 "(about %.1f s)", got, asked, coll, sz->share_s, sz->est_s);
}

static void add_size(cJSON *f, const pf_size_t *sz)
{
    if (!f || sz->bytes == sz->asked)
        return;
    cJSON *o = cJSON_AddObjectToObject(f, "sized");
    cJSON_AddNumberToObject(o, "asked_bytes", (double)sz->asked);
    cJSON_AddNumberToObject(o, "measured_bytes", (double)sz->bytes);
    cJSON_AddNumberToObject(o, "probe_bytes", (double)sz->probe_bytes);
    cJSON_AddNumberToObject(o, "probe_s", sz->probe_s);
    cJSON_AddNumberToObject(o, "estimated_s", sz->est_s);
    cJSON_AddNumberToObject(o, "share_s", sz->share_s);
    if (!sz->bytes)
        cJSON_AddNumberToObject(o, "upper_bound_gbps", sz->bound_gbps);
}

void pf_size_json(cJSON *f, const pf_size_t *sz)
{
    add_size(f, sz);
}

dl_status_t pf_faults(pf_ctx_t *c, dl_status_t st, const char *what)
{
    if (!c->be_opts) /* in these processes: MPI itself failed */
        return st;
    typedef struct {
        int32_t level;
        char why[244];
    } fault_t;
    fault_t mine = {0}, *all = calloc((size_t)c->nranks, sizeof(fault_t));
    if (!all)
        return DL_ERR_NOMEM;
    int level = 0;
    const char *why = dl_session_fault(c->be_opts, &level);
    mine.level = level;
    snprintf(mine.why, sizeof(mine.why), "%s", why);
    if (MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, c->world) !=
        MPI_SUCCESS) {
        free(all);
        return DL_ERR_COMM;
    }
    int worst = 0;
    for (int r = 0; r < c->nranks; r++)
        worst = all[r].level > worst ? all[r].level : worst;
    /* The worst is the cause: a hung worker's peers give up waiting on it. */
    for (int r = 0; worst && r < c->nranks; r++) {
        if (all[r].level != worst)
            continue;
        int h = c->lay.host_of[r];
        char subject[300];
        snprintf(subject, sizeof(subject), "%s rank%d", c->lay.names[h], r);
        cJSON *f = cJSON_CreateObject();
        cJSON_AddNumberToObject(f, "rank", r);
        cJSON_AddStringToObject(f, "host", c->lay.names[h]);
        cJSON_AddStringToObject(f, "during", what);
        pf_check(c, DL_PF_FAIL, "worker", "rank", subject, f, "rank %d (%s) during %s: %s", r,
                 c->lay.names[h], what, all[r].why);
        pf_blame_host(c, h);
    }
    free(all);
    if (!worst)
        return st;
    c->faulted = 1;
    return DL_ERR_CHECK;
}

/* One member's measurement, on the ranks of that member. */
static dl_status_t measure_one(pf_ctx_t *c, MPI_Comm sub, dl_coll_id_t coll, uint64_t bytes,
                               double *busbw, uint64_t *wrong, pf_size_t *sz)
{
    dl_xcomm_t x;
    dl_xcomm_mpi_init(&x, &sub);
    pf_be_t b;
    dl_status_t st = pf_be_open(c, &x, bytes, &b);
    if (st != DL_OK)
        return st;
    dl_result_t r;
    st = pf_measure_sized(c, &b, &x, coll, bytes, &r, sz);
    if (st == DL_OK) {
        /* The median iteration: one descheduled iteration must not make a
         * healthy member look slow. */
        *busbw = sz->bytes ? dl_busbw(r.c.coll, x.nranks, r.c.counts.bytes, r.t.p50)
                           : sz->bound_gbps;
        *wrong = r.wrong;
    }
    dl_result_free(&r);
    pf_be_close(c, &b);
    return st;
}

dl_status_t pf_measure_members(pf_ctx_t *c, const int *color, int ncolors, dl_coll_id_t coll,
                               uint64_t bytes, double *fig, uint64_t *wrong)
{
    return pf_measure_members_sized(c, color, ncolors, coll, bytes, fig, wrong, NULL);
}

dl_status_t pf_measure_members_sized(pf_ctx_t *c, const int *color, int ncolors,
                                     dl_coll_id_t coll, uint64_t bytes, double *fig,
                                     uint64_t *wrong, pf_size_t *sizes)
{
    double *f = malloc((size_t)ncolors * sizeof(double));
    uint64_t *w = calloc((size_t)ncolors + 1, sizeof(uint64_t));
    if (!f || !w) {
        free(f);
        free(w);
        return DL_ERR_NOMEM;
    }
    for (int i = 0; i < ncolors; i++) {
        f[i] = -1;
        if (sizes)
            sizes[i] = (pf_size_t){.asked = bytes, .bytes = bytes};
    }
    int mine = color[c->rank];
    MPI_Comm sub = MPI_COMM_NULL;
    dl_status_t st = DL_OK;
    if (MPI_Comm_split(c->world, mine >= 0 ? mine : MPI_UNDEFINED, c->rank, &sub) != MPI_SUCCESS)
        st = DL_ERR_COMM;
    if (st == DL_OK && sub != MPI_COMM_NULL) {
        int n, r;
        MPI_Comm_size(sub, &n);
        MPI_Comm_rank(sub, &r);
        double b = -1;
        uint64_t wr = 0;
        pf_size_t sz = {.asked = bytes, .bytes = bytes};
        if (n > 1)
            st = measure_one(c, sub, coll, bytes, &b, &wr, &sz);
        if (st == DL_OK && r == 0) {
            f[mine] = b;
            w[mine] = wr;
        }
        if (sizes)
            sizes[mine] = sz; /* known on the member's ranks; gathered below */
        MPI_Comm_free(&sub);
    }
    /* Everyone learns every figure (and whether anyone broke), so the next
     * decisions (outliers, retests) are taken alike on every rank. */
    w[ncolors] = st != DL_OK;
    if (pf_quiet_barrier(c->world) != DL_OK)
        st = DL_ERR_COMM;
    if (MPI_Allreduce(MPI_IN_PLACE, f, ncolors, MPI_DOUBLE, MPI_MAX, c->world) != MPI_SUCCESS ||
        MPI_Allreduce(MPI_IN_PLACE, w, ncolors + 1, MPI_UINT64_T, MPI_SUM, c->world) != MPI_SUCCESS)
        st = DL_ERR_COMM;
    if (st == DL_OK && w[ncolors])
        st = DL_ERR_COMM;
    if (w[ncolors])
        st = pf_faults(c, st, dl_colls[coll]->name);
    if (st == DL_OK && sizes && gather_sizes(c, color, ncolors, sizes) != DL_OK)
        st = DL_ERR_COMM;
    for (int i = 0; i < ncolors; i++) {
        if (fig)
            fig[i] = f[i];
        if (wrong)
            wrong[i] = w[i];
    }
    free(f);
    free(w);
    return st;
}

int pf_still_low(const pf_ctx_t *c, const double *figs, int n, int i, double v)
{
    double *f = malloc((size_t)n * sizeof(double));
    int *low = malloc((size_t)n * sizeof(int)), res = 0;
    double median;
    if (f && low) {
        for (int k = 0; k < n; k++)
            f[k] = k == i ? v : figs[k];
        dl_pf_low_outliers(f, n, c->o->min_fraction, c->o->mad_k, low, &median);
        res = low[i];
    }
    free(f);
    free(low);
    return res;
}
