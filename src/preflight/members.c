/* Measuring many sub-communicators at once: the concurrency that keeps a
 * scope's cost flat in the node count. */
#include "internal.h"

#include <stdio.h>

#include "../engine/engine.h"

#include <stdlib.h>
#include <time.h>

/* Waits for every rank of world without spinning: a rank whose member is
 * done (or that sits this round out) must not take the CPU, the PCIe or the
 * memory bandwidth that members still measuring need. */
static dl_status_t quiet_barrier(MPI_Comm world)
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
                               double *busbw, uint64_t *wrong)
{
    int rank, n;
    MPI_Comm_rank(sub, &rank);
    MPI_Comm_size(sub, &n);
    dl_xcomm_t x;
    dl_xcomm_mpi_init(&x, &sub);
    pf_be_t b;
    dl_status_t st = pf_be_open(c, &x, bytes, &b);
    if (st != DL_OK)
        return st;
    dl_case_t cs;
    dl_case_init(&cs, dl_colls[coll], DL_DT_FLOAT32, DL_OP_SUM, DL_PLACE_OUT, 0, bytes, n, rank);
    dl_result_t r;
    st = dl_measure_case(&b.w.ops, &b.w, &x, &c->o->mo, &cs, &r);
    if (st == DL_OK) {
        /* The median iteration: one descheduled iteration must not make a
         * healthy member look slow. */
        *busbw = dl_busbw(cs.coll, n, cs.counts.bytes, r.t.p50);
        *wrong = r.wrong;
    }
    dl_result_free(&r);
    pf_be_close(c, &b);
    return st;
}

dl_status_t pf_measure_members(pf_ctx_t *c, const int *color, int ncolors, dl_coll_id_t coll,
                               uint64_t bytes, double *fig, uint64_t *wrong)
{
    double *f = malloc((size_t)ncolors * sizeof(double));
    uint64_t *w = calloc((size_t)ncolors + 1, sizeof(uint64_t));
    if (!f || !w) {
        free(f);
        free(w);
        return DL_ERR_NOMEM;
    }
    for (int i = 0; i < ncolors; i++)
        f[i] = -1;
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
        if (n > 1)
            st = measure_one(c, sub, coll, bytes, &b, &wr);
        if (st == DL_OK && r == 0) {
            f[mine] = b;
            w[mine] = wr;
        }
        MPI_Comm_free(&sub);
    }
    /* Everyone learns every figure (and whether anyone broke), so the next
     * decisions (outliers, retests) are taken alike on every rank. */
    w[ncolors] = st != DL_OK;
    if (quiet_barrier(c->world) != DL_OK)
        st = DL_ERR_COMM;
    if (MPI_Allreduce(MPI_IN_PLACE, f, ncolors, MPI_DOUBLE, MPI_MAX, c->world) != MPI_SUCCESS ||
        MPI_Allreduce(MPI_IN_PLACE, w, ncolors + 1, MPI_UINT64_T, MPI_SUM, c->world) != MPI_SUCCESS)
        st = DL_ERR_COMM;
    if (st == DL_OK && w[ncolors])
        st = DL_ERR_COMM;
    if (w[ncolors])
        st = pf_faults(c, st, dl_colls[coll]->name);
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
