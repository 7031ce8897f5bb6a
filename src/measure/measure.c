/* The measurement loop shared by every backend. */
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A batch long enough that the between-batch reduction is noise, and that
 * a batch mean spans the host's drift (on an H100, launch-bound calls' mean
 * drifts over about 4 ms: shorter batches would narrow the interval without
 * knowing more; results/reference/h200-multirank/); short enough that the
 * adaptive stop reacts within a few milliseconds. The first batches are
 * shorter: a quiet case has its answer by then. */
#define BATCH_SECONDS 0.005
#define FIRST_BATCH_SECONDS 0.0005
#define BATCH_MAX 10000
#define MIN_BATCHES 3     /* a CI of batch means needs a few */
#define SAMPLE_CALLS 200  /* the per-call pass: at most, */
#define SAMPLE_MIN 10     /* at least, */
#define SAMPLE_SHARE 0.2  /* and about this share of the timed calls */
#define DIRECT_CALL_SECONDS 0.001 /* calls this long are timed one by one in the batches */

#define NOISY_MIN_BATCHES 5     /* a spread estimate good enough to give up on */
#define NOISY_MIN_SHARE 0.25    /* of --budget spent before giving up */
#define CI_FLOOR_SECONDS 1e-8   /* the table's last digit (0.01 us): finer shows nothing */

const char *const dl_stop_names[DL_STOP_COUNT] = {"ci",    "budget", "max-iters",
                                                   "fixed", "noisy",  "no-op"};

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

int dl_result_moves_nothing(const dl_result_t *r)
{
    return r->bus_ranks == 1 && r->c.place == DL_PLACE_IN;
}

double dl_algbw(uint64_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes / seconds / 1e9 : 0;
}

double dl_busbw(const dl_coll_t *c, int nranks, uint64_t bytes, double seconds)
{
    return dl_algbw(bytes, seconds) * c->busbw_factor(nranks);
}

/* A row's bandwidths from its mean time. One rank in place moves nothing
 * (the library returns at once): a size over a call's own cost is not a
 * bandwidth (9 PB/s "peaks"), so both are 0, as busbw already is for the
 * collectives whose factor is 0 on one rank. */
void dl_result_bandwidths(dl_result_t *r)
{
    int none = dl_result_moves_nothing(r);
    r->algbw_gbps = none ? 0 : dl_algbw(r->c.counts.bytes, r->t.mean);
    r->busbw_gbps = none ? 0 : dl_busbw(r->c.coll, r->bus_ranks, r->c.counts.bytes, r->t.mean);
}

/* Packed: the coll id, whether the per-rank arrays follow, the record as it
 * is in memory (both ends are the same executable), then the arrays. */
typedef struct {
    int32_t coll, arrays, late, pad;
    dl_result_t r;
} packed_t;

dl_status_t dl_result_pack(const dl_result_t *r, void **buf, uint32_t *len)
{
    int arrays = r->wrong_per_rank && r->rank_mean_s, late = arrays && r->rank_late_s;
    size_t n = arrays ? (size_t)r->nranks : 0, size = sizeof(packed_t) + n * (late ? 24 : 16);
    packed_t *p = calloc(1, size);
    if (!p)
        return DL_ERR_NOMEM;
    p->coll = r->c.coll->id;
    p->arrays = arrays;
    p->late = late;
    p->r = *r;
    p->r.c.coll = NULL;
    p->r.wrong_per_rank = NULL;
    p->r.rank_mean_s = NULL;
    p->r.rank_late_s = NULL;
    if (n) {
        memcpy(p + 1, r->wrong_per_rank, n * 8);
        memcpy((char *)(p + 1) + n * 8, r->rank_mean_s, n * 8);
        if (late)
            memcpy((char *)(p + 1) + n * 16, r->rank_late_s, n * 8);
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
        (p.late && !p.arrays) || len != sizeof(p) + n * (p.late ? 24 : 16))
        return DL_ERR_COMM;
    *out = p.r;
    out->c.coll = dl_colls[p.coll];
    out->choice.algo[sizeof(out->choice.algo) - 1] = '\0';
    out->choice.proto[sizeof(out->choice.proto) - 1] = '\0';
    out->choice.from[sizeof(out->choice.from) - 1] = '\0';
    if (n) {
        out->wrong_per_rank = malloc(n * 8);
        out->rank_mean_s = malloc(n * 8);
        out->rank_late_s = p.late ? malloc(n * 8) : NULL;
        if (!out->wrong_per_rank || !out->rank_mean_s || (p.late && !out->rank_late_s)) {
            dl_result_free(out);
            return DL_ERR_NOMEM;
        }
        memcpy(out->wrong_per_rank, (const char *)buf + sizeof(p), n * 8);
        memcpy(out->rank_mean_s, (const char *)buf + sizeof(p) + n * 8, n * 8);
        if (p.late)
            memcpy(out->rank_late_s, (const char *)buf + sizeof(p) + n * 16, n * 8);
    }
    return DL_OK;
}

void dl_result_free(dl_result_t *r)
{
    free(r->wrong_per_rank);
    free(r->rank_mean_s);
    free(r->rank_late_s);
    r->wrong_per_rank = NULL;
    r->rank_mean_s = NULL;
    r->rank_late_s = NULL;
}

/* Every group at once (--split), or the one group. */
static const dl_xcomm_t *everyone(const dl_xcomm_t *x) { return x->all ? x->all : x; }

/* Groups side by side (--split) take the loop's decisions together: the
 * largest count any group wants (the same calls, at the same time). */
static dl_status_t lockstep(const dl_xcomm_t *x, int *n)
{
    if (!x->all)
        return DL_OK;
    double v = *n;
    dl_status_t st = x->all->max_doubles(x->all->arg, &v, 1);
    *n = (int)v;
    return st;
}

/* Every rank (of every group) learns whether any rank failed, so none is
 * left waiting in a collective its peer will never join. */
static dl_status_t agree(const dl_xcomm_t *x, dl_status_t st)
{
    uint64_t bad = st != DL_OK;
    if (bad && x->local_failure)
        x->local_failure(st);
    const dl_xcomm_t *w = everyone(x);
    dl_status_t xs = w->sum_u64(w->arg, &bad, 1);
    if (xs != DL_OK)
        return xs;
    return st != DL_OK ? st : (bad ? DL_ERR_COMM : DL_OK);
}

/* Batch means, weighted by their calls (batches differ in length): the
 * per-call variance they imply is sum b (m - mean)^2 / (batches - 1), and
 * the mean's CI is t(batches - 1) x sqrt(variance / calls), the batch-means
 * estimator; a call's per-call timing never enters it. */
typedef struct {
    double b, bm, bmm; /* sums of b, b m, b m^2 */
    size_t batches;
} bmeans_t;

static void bmeans_add(bmeans_t *r, double b, double m)
{
    r->b += b;
    r->bm += b * m;
    r->bmm += b * m * m;
    r->batches++;
}

static double bmeans_mean(const bmeans_t *r) { return r->b > 0 ? r->bm / r->b : 0; }

/* The CI half-width a mean must reach: --ci-target of it, but never finer
 * than the table's last digit (CI_FLOOR_SECONDS). A sub-microsecond call
 * (the mpi backend's on one host) otherwise chases nanoseconds through host
 * jitter to --max-iters; GPU calls that move data (microseconds) never
 * reach the floor. One rank in place, which moves nothing, no longer
 * chases anything: it stops as no-op (adaptive_done). */
static double ci_goal(const dl_measure_opts_t *o, double mean)
{
    double g = o->ci_target * mean;
    return g > CI_FLOOR_SECONDS ? g : CI_FLOOR_SECONDS;
}

static double bmeans_ci95(const bmeans_t *r)
{
    if (r->batches < 2)
        return INFINITY;
    double var = (r->bmm - r->bm * r->bm / r->b) / (double)(r->batches - 1);
    return dl_t95(r->batches - 1) * sqrt(var > 0 ? var / r->b : 0);
}

/* Calls still needed for the CI target: the half-width shrinks as
 * 1/sqrt(calls). A margin, since the spread is itself an estimate; 0 when
 * there is no estimate yet. */
static double predicted_need(const dl_measure_opts_t *o, const bmeans_t *r)
{
    double ci = bmeans_ci95(r), goal = ci_goal(o, bmeans_mean(r));
    if (r->batches < 2 || !(ci < INFINITY) || o->ci_target <= 0)
        return 0;
    double ratio = ci / goal;
    return r->b * (ratio * ratio - 1) * 1.2 + 1;
}

static int batch_size(const dl_measure_opts_t *o, double per_iter, int done, int batches,
                      const bmeans_t *run)
{
    if (o->iters > 0) {
        /* A fixed count still comes in a few batches, so the CI is of batch means. */
        int b = (o->iters + MIN_BATCHES - 1) / MIN_BATCHES;
        b = b > BATCH_MAX ? BATCH_MAX : b;
        return o->iters - done < b ? o->iters - done : b;
    }
    double secs = batches < MIN_BATCHES ? FIRST_BATCH_SECONDS : BATCH_SECONDS;
    double per_unit = per_iter * (o->unit_calls > 1 ? o->unit_calls : 1);
    double want = per_unit > 0 ? secs / per_unit : BATCH_MAX;
    /* No more than the stop rule is predicted to need, but growing by a
     * quarter at least, so a poor prediction costs few batches. */
    double need = predicted_need(o, run);
    if (batches >= MIN_BATCHES && need > 0 && need < want)
        want = need > done / 4.0 ? need : done / 4.0;
    int b = want > BATCH_MAX ? BATCH_MAX : (int)want;
    int left = MIN_BATCHES - batches;
    if (left > 0 && b < (o->min_iters - done + left - 1) / left)
        b = (o->min_iters - done + left - 1) / left;
    if (b < 1)
        b = 1;
    if (b > o->max_iters - done)
        b = o->max_iters - done;
    return b;
}

/* The stop rule reads running sums over batch means. A row whose spread,
 * once a quarter of the budget has measured it, predicts that the CI target
 * would need more than the whole budget stops there ("noisy"): the rest of
 * the budget would not converge it either, and a noisy host would otherwise
 * spend the budget on every row. */
static int adaptive_done(const dl_measure_opts_t *o, const bmeans_t *r, int n, double spent,
                         double unit, int no_op, dl_stop_t *stop)
{
    /* A call that moves nothing (one rank in place: the library returns at
     * once) costs its enqueue alone. Its first batches measure that cost;
     * chasing its CI through host jitter measured nothing more and took a
     * third of a one-GPU sweep's timed seconds. */
    if (no_op && n >= o->min_iters && r->batches >= MIN_BATCHES) {
        *stop = DL_STOP_NO_OP;
        return 1;
    }
    if (o->ci_target > 0 && n >= o->min_iters && r->batches >= MIN_BATCHES &&
        bmeans_ci95(r) <= ci_goal(o, bmeans_mean(r))) {
        *stop = DL_STOP_CI;
        return 1;
    }
    if (n >= o->max_iters) {
        *stop = DL_STOP_MAX_ITERS;
        return 1;
    }
    if (n >= o->min_iters && spent >= o->budget_s) {
        *stop = DL_STOP_BUDGET;
        return 1;
    }
    double need = predicted_need(o, r) * bmeans_mean(r) * unit;
    if (o->ci_target > 0 && n >= o->min_iters && r->batches >= NOISY_MIN_BATCHES &&
        spent >= NOISY_MIN_SHARE * o->budget_s && spent + need > o->budget_s) {
        *stop = DL_STOP_NOISY;
        return 1;
    }
    return 0;
}

/* The headline: timed batches, each one run of back-to-back calls with no
 * per-call timing (one timer around the batch, as a job pays), until the
 * stop rule holds. A batch's time is the slowest rank's (max over ranks of
 * the batch), its mean that over its calls; the row's mean is the sum of
 * the batches' times over the calls, the CI that of the batch means. */
typedef struct {
    int n, batches;
    double sum;    /* slowest-rank seconds, per call (a unit's time / unit_calls) */
    double local;  /* this rank's own seconds */
    bmeans_t run;  /* the batch means */
    double *t;     /* direct: each call's slowest-rank time (n of them) */
    uint64_t *scratch; /* -a mean's integer sums, one batch */
    size_t scratch_n;
} timed_t;

/* Long calls (or a fixed count too small for a separate pass) are timed
 * one by one in the batches themselves: what an event or a clock read
 * costs is then nothing beside the call, and a second pass would double
 * a slow link's time. */
static int direct_timing(const dl_measure_opts_t *o, double per_iter)
{
    return per_iter >= DIRECT_CALL_SECONDS || (o->iters > 0 && o->iters <= SAMPLE_MIN);
}

static dl_status_t timed_loop(const dl_backend_ops_t *be, void *ctx, const dl_xcomm_t *x,
                              const dl_measure_opts_t *o, const dl_case_t *c, double per_iter,
                              int no_op, timed_t *tm, dl_stop_t *stop)
{
    double spent = 0, unit = o->unit_calls > 1 ? o->unit_calls : 1; /* spent: device seconds */
    int direct = direct_timing(o, per_iter), cap = 0;
    dl_status_t st = DL_OK;
    memset(tm, 0, sizeof(*tm));
    *stop = o->iters > 0 ? DL_STOP_FIXED : DL_STOP_BUDGET;
    while (st == DL_OK) {
        int b = batch_size(o, per_iter, tm->n, tm->batches, &tm->run);
        if ((st = lockstep(x, &b)) != DL_OK)
            break;
        if (direct && tm->n + b + 1 > cap) {
            cap = 2 * (tm->n + b + 1);
            double *nt = realloc(tm->t, (size_t)cap * sizeof(double));
            if (!nt) {
                st = agree(x, DL_ERR_NOMEM);
                break;
            }
            tm->t = nt;
        }
        double batch_total = 0, *t = direct ? tm->t + tm->n : NULL;
        st = agree(x, be->run(ctx, c, b, t, &batch_total));
        if (st != DL_OK)
            break;
        tm->local += batch_total;
        /* The one reduction per batch: its total (and, direct, its calls). */
        double one[1] = {batch_total}, *v = t ? t : one;
        size_t nv = t ? (size_t)b + 1 : 1;
        if (t)
            t[b] = batch_total; /* the spare slot past this batch */
        if (o->agg == DL_AGG_MEAN && tm->scratch_n < nv) {
            free(tm->scratch);
            tm->scratch_n = nv;
            if (!(tm->scratch = malloc(nv * sizeof(*tm->scratch)))) {
                st = DL_ERR_NOMEM;
                break;
            }
        }
        st = dl_agg_over_ranks(x, o->agg, v, nv, tm->scratch); /* -a: max by default */
        batch_total = v[nv - 1];
        if (st != DL_OK)
            break;
        tm->n += b;
        tm->batches++;
        tm->sum += batch_total;
        spent += batch_total * unit;
        per_iter = batch_total / b;
        bmeans_add(&tm->run, b, per_iter);
        int more = !(o->iters > 0 ? tm->n >= o->iters
                                  : adaptive_done(o, &tm->run, tm->n, spent, unit, no_op, stop));
        if ((st = lockstep(x, &more)) != DL_OK || !more) /* until every group is done */
            break;
    }
    return st;
}

/* The spread: a separate pass of back-to-back calls timed one by one (the
 * per-call timing's cost lands here, never in the mean), at most
 * SAMPLE_CALLS and about a SAMPLE_SHARE of the timed seconds; each call's
 * time is the slowest rank's. */
static dl_status_t sampled_pass(const dl_backend_ops_t *be, void *ctx, const dl_xcomm_t *x,
                                const dl_measure_opts_t *o, const dl_case_t *c, double per_iter,
                                int n_timed, dl_stats_t *out)
{
    double want = per_iter > 0 ? SAMPLE_SHARE * n_timed : SAMPLE_CALLS;
    int k = want > SAMPLE_CALLS ? SAMPLE_CALLS : (int)want;
    if (k < SAMPLE_MIN)
        k = SAMPLE_MIN;
    if (k > n_timed)
        k = n_timed;
    dl_status_t ls = lockstep(x, &k);
    if (ls != DL_OK)
        return ls;
    double *t = malloc((size_t)k * sizeof(*t)), total = 0;
    if (!t)
        return agree(x, DL_ERR_NOMEM);
    uint64_t *scratch = o->agg == DL_AGG_MEAN ? malloc((size_t)k * sizeof(*scratch)) : NULL;
    dl_status_t st = agree(x, be->run(ctx, c, k, t, &total));
    if (st == DL_OK && o->agg == DL_AGG_MEAN && !scratch)
        st = DL_ERR_NOMEM;
    if (st == DL_OK)
        st = dl_agg_over_ranks(x, o->agg, t, (size_t)k, scratch);
    free(scratch);
    if (st == DL_OK)
        st = dl_stats_compute(t, (size_t)k, out);
    free(t);
    return st;
}

/* Arrivals: a few calls, each after a barrier; a rank's lateness in a call
 * is when it entered less when the barrier let it go, on its own clock, so
 * it needs no common clock. When it entered: the later of its finish less
 * its own time of the call (where its device kernel could start: a peer's
 * time includes waiting for a late rank) and when the backend says the call
 * began (entered: after an injected wait). The median over the calls. */
static dl_status_t arrival_pass(const dl_backend_ops_t *be, void *ctx, const dl_xcomm_t *x,
                                const dl_case_t *c, double *late)
{
    double v[DL_ARRIVAL_CALLS];
    dl_status_t st = DL_OK;
    for (int i = 0; i < DL_ARRIVAL_CALLS && st == DL_OK; i++) {
        uint64_t one = 1;
        st = x->sum_u64(x->arg, &one, 1);
        double go = dl_now(), t = 0, total = 0, done = go, began = go;
        if (st == DL_OK) {
            dl_status_t own = be->run(ctx, c, 1, &t, &total);
            done = dl_now(); /* before the agreement, which waits for the others */
            if (be->entered)
                began = be->entered(ctx);
            st = agree(x, own);
        }
        v[i] = (done - t > began ? done - t : began) - go;
    }
    *late = st == DL_OK ? dl_median(v, DL_ARRIVAL_CALLS) : 0;
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

/* What the backend chose for the checked call, and whether every rank saw
 * the same: a hash of each rank's choice, its max and min over ranks. */
static dl_status_t read_choice(const dl_backend_ops_t *be, void *ctx, const dl_xcomm_t *x,
                               dl_result_t *out)
{
    be->chose(ctx, &out->choice);
    uint32_t h = 2166136261u;
    const dl_choice_t *k = &out->choice;
    for (const char *p = k->algo; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    for (const char *p = k->proto; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    h = (h ^ (uint32_t)k->nchannels) * 16777619u;
    double v[2] = {(double)h, -(double)h};
    dl_status_t st = x->max_doubles(x->arg, v, 2);
    out->choice_mixed = st == DL_OK && v[0] != -v[1];
    return st;
}

dl_status_t dl_measure_ready(const dl_backend_ops_t *be, void *ctx, const dl_xcomm_t *x,
                             const dl_case_t *c, int check, uint64_t *wrong)
{
    return agree(x, check ? be->check(ctx, c, wrong) : be->prepare(ctx, c));
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
    out->split = opts->split;
    out->group = x->group;
    double t0 = dl_now();
    uint64_t wrong = 0;
    dl_status_t st = dl_measure_ready(be, ctx, x, c, o->check, &wrong);
    if (st == DL_OK && o->check && be->chose) /* what the library chose for the checked call */
        st = read_choice(be, ctx, x, out);
    double warm = 0;
    if (st == DL_OK && o->warmup > 0)
        st = agree(x, be->run(ctx, c, o->warmup, NULL, &warm));
    double per_iter = o->warmup > 0 ? warm / o->warmup : 0;
    const dl_xcomm_t *w = everyone(x); /* groups: one plan of batches for all */
    if (st == DL_OK)
        st = w->max_doubles(w->arg, &per_iter, 1);

    timed_t tm = {0};
    double t1 = dl_now(), late = 0;
    out->setup_s = t1 - t0;
    dl_stop_t stop = o->iters > 0 ? DL_STOP_FIXED : DL_STOP_BUDGET;
    if (st == DL_OK)
        st = timed_loop(be, ctx, x, o, c, per_iter, dl_result_moves_nothing(out), &tm, &stop);
    out->stop = stop;
    out->converged = stop == DL_STOP_CI || stop == DL_STOP_FIXED || stop == DL_STOP_NO_OP;
    out->timed_s = dl_now() - t1;
    int n = tm.n;

    if (st == DL_OK && n > 0)
        st = tm.t ? dl_stats_compute(tm.t, (size_t)n, &out->t)
                  : sampled_pass(be, ctx, x, o, c, tm.sum / n, n, &out->t);
    free(tm.t);
    free(tm.scratch);
    if (st == DL_OK && n > 0 && o->arrivals)
        st = arrival_pass(be, ctx, x, c, &late);
    if (st == DL_OK && n > 0) {
        /* The headline figures are the batches'; the spread the samples'. */
        out->t.n = (size_t)n;
        out->t.mean = tm.sum / n;
        out->t.ci95 = bmeans_ci95(&tm.run);
        if (!(out->t.ci95 < INFINITY))
            out->t.ci95 = 0;
    }
    double total = tm.sum, local = tm.local;
    if (st == DL_OK && o->arrivals)
        st = gather_per_rank(x, late, &out->rank_late_s);
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
    /* A model moves no data: nothing checked, unless a fault was planted. */
    out->checked = o->check && (!dl_backend_has(be, DL_CAP_MODELLED) || out->wrong > 0);
    if (st == DL_OK) {
        out->avg_s = total / n;
        dl_result_bandwidths(out);
    }
    out->status = st;
    return st;
}

int dl_result_stragglers(const dl_result_t *r, int *late)
{
    int n = r->nranks, named = 0;
    for (int i = 0; i < n; i++)
        late[i] = 0;
    if (!r->rank_late_s || n < 3)
        return 0; /* two ranks cannot say which one is off */
    double *v = malloc((size_t)n * sizeof(*v));
    if (!v)
        return 0;
    memcpy(v, r->rank_late_s, (size_t)n * sizeof(*v));
    double med = dl_median(v, (size_t)n), mad = dl_mad(v, (size_t)n, med);
    /* The floor: a barrier lets ranks go a few microseconds apart, more
     * through a worker's relay; lateness below a quarter of a call's time
     * (or DL_LATE_FLOOR_S) is not a straggler, however tight the others. */
    double floor = 0.25 * r->t.p50 > DL_LATE_FLOOR_S ? 0.25 * r->t.p50 : DL_LATE_FLOOR_S;
    for (int i = 0; i < n; i++)
        if (r->rank_late_s[i] - med > DL_LATE_MAD_K * mad && r->rank_late_s[i] - med > floor)
            late[i] = 1, named++;
    free(v);
    return named;
}

/* For the step loop (step.c): the same agreement, and the stop rule on
 * per-call running figures (its calls are timed one by one). */
dl_status_t dl_measure_agree(const dl_xcomm_t *x, dl_status_t st)
{
    return agree(x, st);
}

int dl_measure_enough(const dl_measure_opts_t *o, const dl_running_t *r, double spent,
                      int *converged)
{
    int n = (int)r->n;
    if (o->ci_target > 0 && n >= o->min_iters && dl_running_ci95(r) <= ci_goal(o, r->mean)) {
        *converged = 1;
        return 1;
    }
    return (n >= o->min_iters && spent >= o->budget_s) || n >= o->max_iters;
}
