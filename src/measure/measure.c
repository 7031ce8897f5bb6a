/* The measurement loop shared by every backend. */
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A batch long enough that the between-batch reduction is noise, short
 * enough that the adaptive stop reacts within a few milliseconds. The
 * first batch is shorter: a quiet case has its answer by then. */
#define BATCH_SECONDS 0.005
#define FIRST_BATCH_SECONDS 0.001
#define BATCH_MAX 10000

void dl_case_init(dl_case_t *c, const dl_coll_t *coll, dl_dtype_t dt, dl_op_t op,
                  dl_place_t place, int root, uint64_t bytes, int nranks, int rank)
{
    memset(c, 0, sizeof(*c));
    c->coll = coll;
    c->dtype = dt;
    c->op = op;
    c->place = place;
    c->root = coll->has_root ? root : -1;
    c->bytes_requested = bytes;
    coll->counts(bytes, dl_dtype_size(dt), nranks, rank, &c->counts);
    c->counts.requested = bytes;
}

double dl_algbw(uint64_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes / seconds / 1e9 : 0;
}

double dl_busbw(const dl_coll_t *c, int nranks, uint64_t bytes, double seconds)
{
    return dl_algbw(bytes, seconds) * c->busbw_factor(nranks);
}

/* Packed: the coll id, whether the per-rank arrays follow, the record as it
 * is in memory (both ends are the same executable), then the arrays. */
typedef struct {
    int32_t coll, arrays;
    dl_result_t r;
} packed_t;

dl_status_t dl_result_pack(const dl_result_t *r, void **buf, uint32_t *len)
{
    int arrays = r->wrong_per_rank && r->rank_mean_s;
    size_t n = arrays ? (size_t)r->nranks : 0, size = sizeof(packed_t) + n * 16;
    packed_t *p = calloc(1, size);
    if (!p)
        return DL_ERR_NOMEM;
    p->coll = r->c.coll->id;
    p->arrays = arrays;
    p->r = *r;
    p->r.c.coll = NULL;
    p->r.wrong_per_rank = NULL;
    p->r.rank_mean_s = NULL;
    if (n) {
        memcpy(p + 1, r->wrong_per_rank, n * 8);
        memcpy((char *)(p + 1) + n * 8, r->rank_mean_s, n * 8);
    }
    *buf = p;
    *len = (uint32_t)size;
    return DL_OK;
}

dl_status_t dl_result_unpack(const void *buf, uint32_t len, dl_result_t *out)
{
    packed_t p;
    if (len < sizeof(p))
        return DL_ERR_COMM;
    memcpy(&p, buf, sizeof(p));
    size_t n = p.arrays ? (size_t)p.r.nranks : 0;
    if (p.coll < 0 || p.coll >= DL_COLL_COUNT || p.r.nranks < 1 || p.r.bus_ranks < 1 ||
        len != sizeof(p) + n * 16)
        return DL_ERR_COMM;
    *out = p.r;
    out->c.coll = dl_colls[p.coll];
    if (n) {
        out->wrong_per_rank = malloc(n * 8);
        out->rank_mean_s = malloc(n * 8);
        if (!out->wrong_per_rank || !out->rank_mean_s) {
            dl_result_free(out);
            return DL_ERR_NOMEM;
        }
        memcpy(out->wrong_per_rank, (const char *)buf + sizeof(p), n * 8);
        memcpy(out->rank_mean_s, (const char *)buf + sizeof(p) + n * 8, n * 8);
    }
    return DL_OK;
}

void dl_result_free(dl_result_t *r)
{
    free(r->wrong_per_rank);
    free(r->rank_mean_s);
    r->wrong_per_rank = NULL;
    r->rank_mean_s = NULL;
}

/* Every rank learns whether any rank failed, so none is left waiting in a
 * collective its peer will never join. */
static dl_status_t agree(const dl_xcomm_t *x, dl_status_t st)
{
    uint64_t bad = st != DL_OK;
    if (bad && x->local_failure)
        x->local_failure(st);
    dl_status_t xs = x->sum_u64(x->arg, &bad, 1);
    if (xs != DL_OK)
        return xs;
    return st != DL_OK ? st : (bad ? DL_ERR_COMM : DL_OK);
}

/* Iterations still needed for the CI target, from the running figures:
 * the half-width shrinks as 1/sqrt(n). A margin, since the spread is
 * itself an estimate; 0 when there is no estimate yet. */
static double predicted_need(const dl_measure_opts_t *o, const dl_running_t *r)
{
    double ci = dl_running_ci95(r), goal = o->ci_target * r->mean;
    if (r->n < 2 || !(ci < INFINITY) || goal <= 0)
        return 0;
    double ratio = ci / goal;
    return (double)r->n * (ratio * ratio - 1) * 1.2 + 1;
}

static int batch_size(const dl_measure_opts_t *o, double per_iter, int done,
                      const dl_running_t *run)
{
    if (o->iters > 0)
        return o->iters - done < BATCH_MAX ? o->iters - done : BATCH_MAX;
    double secs = done ? BATCH_SECONDS : FIRST_BATCH_SECONDS;
    double per_unit = per_iter * (o->unit_calls > 1 ? o->unit_calls : 1);
    double want = per_unit > 0 ? secs / per_unit : BATCH_MAX;
    double need = predicted_need(o, run);
    /* No more than the stop rule is predicted to need, but growing by a
     * quarter at least, so a poor prediction costs few batches. */
    if (need > 0 && need < want)
        want = need > done / 4.0 ? need : done / 4.0;
    int b = want > BATCH_MAX ? BATCH_MAX : (int)want;
    if (b < o->min_iters - done)
        b = o->min_iters - done;
    if (b < 1)
        b = 1;
    if (b > o->max_iters - done)
        b = o->max_iters - done;
    return b;
}

/* The stop rule reads running sums: sorting every sample after every batch
 * made long adaptive runs quadratic in their iteration count. */
static int adaptive_done(const dl_measure_opts_t *o, const dl_running_t *r, double spent,
                         int *converged)
{
    int n = (int)r->n;
    if (n >= o->min_iters && dl_running_ci95(r) <= o->ci_target * r->mean) {
        *converged = 1;
        return 1;
    }
    return (n >= o->min_iters && spent >= o->budget_s) || n >= o->max_iters;
}

/* Timed batches until the stop rule holds; t gets the slowest rank's time
 * of each iteration. Returns the iteration count in *n. */
static dl_status_t timed_loop(const dl_backend_ops_t *be, void *ctx, const dl_xcomm_t *x,
                              const dl_measure_opts_t *o, const dl_case_t *c,
                              double per_iter, double **tp, int *np, double *total_s,
                              double *local_s, int *converged)
{
    int cap = o->iters > 0 ? o->iters : (o->max_iters < 1024 ? o->max_iters : 1024);
    double *t = malloc(((size_t)cap + 1) * sizeof(*t));
    uint64_t *scratch = NULL; /* -a mean's integer sums, one batch */
    size_t scratch_n = 0;
    int n = 0;
    double spent = 0, local = 0, sum = 0; /* spent: device seconds; sum: per-call scaled */
    double unit = o->unit_calls > 1 ? o->unit_calls : 1;
    dl_running_t run = {0};
    dl_status_t st = t ? DL_OK : DL_ERR_NOMEM;
    *converged = o->iters > 0;
    while (st == DL_OK) {
        int b = batch_size(o, per_iter, n, &run);
        if (n + b > cap) {
            while (n + b > cap)
                cap *= 2;
            double *nt = realloc(t, ((size_t)cap + 1) * sizeof(*t));
            if (!nt) {
                st = DL_ERR_NOMEM;
                break;
            }
            t = nt;
        }
        double batch_total = 0;
        st = agree(x, be->run(ctx, c, b, t + n, &batch_total));
        if (st != DL_OK)
            break;
        /* One reduction per batch: the iterations' times and the batch total. */
        local += batch_total;
        t[n + b] = batch_total; /* the spare slot past this batch */
        if (o->agg == DL_AGG_MEAN && scratch_n < (size_t)b + 1) {
            free(scratch);
            scratch_n = (size_t)b + 1;
            if (!(scratch = malloc(scratch_n * sizeof(*scratch)))) {
                st = DL_ERR_NOMEM;
                break;
            }
        }
        st = dl_agg_over_ranks(x, o->agg, t + n, (size_t)b + 1, scratch);
        if (st != DL_OK)
            break;
        batch_total = t[n + b];
        n += b;
        sum += batch_total;
        spent += batch_total * unit;
        per_iter = batch_total / b;
        dl_running_add(&run, t + n - b, (size_t)b);
        if (o->iters > 0 ? n >= o->iters : adaptive_done(o, &run, spent, converged))
            break;
    }
    free(scratch);
    *tp = t;
    *np = n;
    *total_s = sum;
    *local_s = local;
    return st;
}

static dl_status_t gather_per_rank(const dl_xcomm_t *x, double mine, double **out)
{
    double *all = x->rank == 0 ? calloc((size_t)x->nranks, sizeof(double)) : NULL;
    if (x->rank == 0 && !all)
        return DL_ERR_NOMEM;
    dl_status_t st = x->gather_double(x->arg, mine, all);
    if (st != DL_OK) {
        free(all);
        return st;
    }
    *out = all;
    return DL_OK;
}

dl_status_t dl_measure_case(const dl_backend_ops_t *be, void *ctx, const dl_xcomm_t *x,
                            const dl_measure_opts_t *opts, const dl_case_t *c, dl_result_t *out)
{
    dl_backend_traits_t tr;
    dl_backend_traits(be, ctx, x->nranks, &tr);
    dl_measure_opts_t mo = *opts, *o = &mo;
    mo.unit_calls = tr.unit_calls;
    memset(out, 0, sizeof(*out));
    out->c = *c;
    out->nranks = x->nranks;
    out->bus_ranks = tr.bus_ranks;
    double t0 = dl_now();
    dl_status_t st = agree(x, be->prepare(ctx, c));
    uint64_t wrong = 0;
    if (st == DL_OK && o->check)
        st = agree(x, be->check(ctx, c, &wrong));
    double warm = 0;
    if (st == DL_OK && o->warmup > 0)
        st = agree(x, be->run(ctx, c, o->warmup, NULL, &warm));
    double per_iter = o->warmup > 0 ? warm / o->warmup : 0;
    if (st == DL_OK)
        st = x->max_doubles(x->arg, &per_iter, 1);

    double *t = NULL, total = 0, local = 0;
    int n = 0;
    double t1 = dl_now();
    out->setup_s = t1 - t0;
    if (st == DL_OK)
        st = timed_loop(be, ctx, x, o, c, per_iter, &t, &n, &total, &local, &out->converged);
    out->timed_s = dl_now() - t1;
    if (st == DL_OK && n > 0)
        st = dl_stats_compute(t, (size_t)n, &out->t);
    free(t);

    /* Each rank's own mean (its share of the batches), then the totals. */
    double *wr = NULL;
    if (st == DL_OK)
        st = gather_per_rank(x, local / (n ? n : 1), &out->rank_mean_s);
    if (st == DL_OK)
        st = gather_per_rank(x, (double)wrong, &wr);
    if (st == DL_OK && x->rank == 0) {
        out->wrong_per_rank = calloc((size_t)x->nranks, sizeof(uint64_t));
        for (int r = 0; out->wrong_per_rank && r < x->nranks; r++)
            out->wrong_per_rank[r] = (uint64_t)wr[r];
    }
    free(wr);
    out->wrong = wrong;
    if (st == DL_OK)
        st = x->sum_u64(x->arg, &out->wrong, 1);
    if (st == DL_OK) {
        out->avg_s = total / n;
        out->algbw_gbps = dl_algbw(c->counts.bytes, out->t.mean);
        out->busbw_gbps = dl_busbw(c->coll, out->bus_ranks, c->counts.bytes, out->t.mean);
    }
    out->status = st;
    return st;
}

/* For the step loop (step.c): the same agreement and the same stop rule. */
dl_status_t dl_measure_agree(const dl_xcomm_t *x, dl_status_t st)
{
    return agree(x, st);
}

int dl_measure_enough(const dl_measure_opts_t *o, const dl_running_t *r, double spent,
                      int *converged)
{
    return adaptive_done(o, r, spent, converged);
}
