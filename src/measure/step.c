/* Training steps as the measured unit: a step's all-reduces back to back,
 * repeated until the step time is known to the CI target. */
#include "measure.h"

#include <stdlib.h>
#include <string.h>

/* A batch of steps between reductions: long enough that the relay's round
 * trip is noise, short enough for the stop rule to react. */
#define STEP_BATCH_SECONDS 0.005
#define STEP_BATCH_MAX 256

typedef struct {
    dl_case_t *c;  /* the step's calls */
    size_t n;
    double **call; /* call[k][i]: call k's time in step i, slowest rank */
    double *step;  /* step[i]: step i's time, slowest rank */
    int cap, steps;
    int stop, checked; /* the rows' dl_stop_t, and whether calls were validated */
} step_t;

static void step_free(step_t *s)
{
    for (size_t k = 0; k < s->n && s->call; k++)
        free(s->call[k]);
    free(s->call);
    free(s->step);
    free(s->c);
}

static dl_status_t grow(step_t *s, int need)
{
    if (need <= s->cap)
        return DL_OK;
    int cap = s->cap ? s->cap : 64;
    while (cap < need)
        cap *= 2;
    double *st = realloc(s->step, (size_t)cap * sizeof(double));
    if (!st)
        return DL_ERR_NOMEM;
    s->step = st;
    for (size_t k = 0; k < s->n; k++) {
        double *c = realloc(s->call[k], (size_t)cap * sizeof(double));
        if (!c)
            return DL_ERR_NOMEM;
        s->call[k] = c;
    }
    s->cap = cap;
    return DL_OK;
}

/* b steps on this rank, then the slowest rank's time of every call and of
 * every step, in one reduction. buf: b * (n + 1) doubles. */
static dl_status_t run_steps(const dl_backend_ops_t *be, void *ctx, const dl_xcomm_t *x,
                             step_t *s, int b, double *buf, double *local)
{
    size_t w = s->n + 1;
    for (int i = 0; i < b; i++) {
        double sum = 0;
        for (size_t k = 0; k < s->n; k++) {
            double tot = 0;
            dl_status_t st = dl_measure_agree(x, be->run(ctx, &s->c[k], 1, &buf[i * w + k], &tot));
            if (st != DL_OK)
                return st;
            sum += tot;
        }
        buf[i * w + s->n] = sum;
        *local += sum;
    }
    dl_status_t st = x->max_doubles(x->arg, buf, (size_t)b * w);
    for (int i = 0; st == DL_OK && i < b; i++) {
        for (size_t k = 0; k < s->n; k++)
            s->call[k][s->steps] = buf[i * w + k];
        s->step[s->steps++] = buf[i * w + s->n];
    }
    return st;
}

/* Checks every call once, warms up, then times steps until the stop rule. */
static dl_status_t measure_step(const dl_backend_ops_t *be, void *ctx, const dl_xcomm_t *x,
                                const dl_measure_opts_t *o, step_t *s, uint64_t *wrong,
                                double *local, int *converged)
{
    size_t big = 0;
    dl_status_t st = DL_OK;
    for (size_t k = 0; k < s->n && st == DL_OK; k++) {
        uint64_t w = 0;
        st = dl_measure_ready(be, ctx, x, &s->c[k], o->check, &w);
        wrong[k] = w;
        if (s->c[k].counts.bytes > s->c[big].counts.bytes)
            big = k;
    }
    /* Buffers sized once, for the largest call; the others use a prefix. */
    if (st == DL_OK)
        st = dl_measure_agree(x, be->prepare(ctx, &s->c[big]));
    double *buf = NULL, spent = 0, per_step = 0, ignore = 0;
    dl_running_t run = {0};
    *converged = o->iters > 0;
    if (st == DL_OK) {
        buf = malloc((size_t)STEP_BATCH_MAX * (s->n + 1) * sizeof(double));
        st = buf ? DL_OK : DL_ERR_NOMEM;
    }
    for (int i = 0; st == DL_OK && i < o->warmup; i++) { /* timed, then dropped */
        int keep = s->steps;
        st = grow(s, keep + 1);
        if (st == DL_OK)
            st = run_steps(be, ctx, x, s, 1, buf, &ignore);
        per_step = s->steps > keep ? s->step[keep] : 0;
        s->steps = keep;
    }
    while (st == DL_OK) {
        int b = per_step > 0 ? (int)(STEP_BATCH_SECONDS / per_step) : 1;
        int left = (o->iters > 0 ? o->iters : o->max_iters) - s->steps;
        if (s->steps < o->min_iters && b < o->min_iters - s->steps)
            b = o->min_iters - s->steps;
        b = b < 1 ? 1 : b > STEP_BATCH_MAX ? STEP_BATCH_MAX : b;
        b = b > left ? left : b;
        if (b < 1)
            break;
        if ((st = grow(s, s->steps + b)) != DL_OK)
            break;
        int first = s->steps;
        st = run_steps(be, ctx, x, s, b, buf, local);
        if (st != DL_OK)
            break;
        dl_running_add(&run, s->step + first, (size_t)b);
        /* From the reduced times, so every rank takes the same decision. */
        for (int i = first; i < s->steps; i++)
            spent += s->step[i];
        per_step = run.mean;
        if (o->iters > 0 ? s->steps >= o->iters : dl_measure_enough(o, &run, spent, converged))
            break;
    }
    free(buf);
    return st;
}

/* The results of one measured step: one per call, then the step's own. */
static dl_status_t report(const step_t *s, int32_t step, const dl_xcomm_t *x,
                          const dl_backend_ops_t *be, void *ctx, const uint64_t *wrong,
                          int converged, double timed_s, dl_result_cb_t cb, void *arg)
{
    dl_backend_traits_t tr;
    dl_backend_traits(be, ctx, x->nranks, &tr);
    uint64_t wsum = 0, bytes = 0;
    dl_status_t st = DL_OK;
    for (size_t k = 0; k <= s->n && st == DL_OK; k++) {
        dl_result_t r;
        memset(&r, 0, sizeof(r));
        const double *t = k < s->n ? s->call[k] : s->step;
        if (k < s->n) {
            r.c = s->c[k];
            r.wrong = wrong[k];
            st = x->sum_u64(x->arg, &r.wrong, 1);
            wsum += r.wrong;
            bytes += s->c[k].counts.bytes;
        } else { /* the step: the last call's case, carrying the step's bytes */
            r.c = s->c[s->n - 1];
            r.c.bytes_requested = bytes;
            r.c.counts.bytes = bytes;
            r.wrong = wsum;
            r.timed_s = timed_s;
        }
        r.step = step;
        r.call = k < s->n ? (int32_t)k : -1;
        r.nranks = x->nranks;
        r.bus_ranks = tr.bus_ranks;
        r.converged = converged;
        r.stop = s->stop;
        r.checked = s->checked || r.wrong > 0; /* a model: only a planted fault */
        if (st == DL_OK)
            st = dl_stats_compute(t, (size_t)s->steps, &r.t);
        if (st != DL_OK)
            break;
        r.avg_s = r.t.mean;
        dl_result_bandwidths(&r);
        st = cb(arg, &r);
    }
    return st;
}

static dl_status_t one_step(const dl_plan_t *p, size_t step, const dl_backend_ops_t *be,
                            void *ctx, const dl_xcomm_t *x, dl_result_cb_t cb, void *arg)
{
    const dl_call_t *calls = p->steps.v[step].calls;
    size_t n = p->steps.v[step].ncalls;
    step_t s = {0};
    s.n = n;
    s.c = calloc(n, sizeof(dl_case_t));
    s.call = calloc(n, sizeof(double *));
    uint64_t *wrong = calloc(n, sizeof(uint64_t));
    dl_status_t st = s.c && s.call && wrong ? DL_OK : DL_ERR_NOMEM;
    dl_place_t place = p->places & 2 ? DL_PLACE_IN : DL_PLACE_OUT;
    for (size_t k = 0; st == DL_OK && k < n; k++)
        dl_case_init(&s.c[k], dl_colls[DL_COLL_ALLREDUCE], calls[k].dtype, DL_OP_SUM, place, 0,
                     calls[k].bytes, x->nranks, x->rank);
    double t0 = dl_now(), local = 0, t1 = t0;
    int converged = 0;
    if (st == DL_OK) {
        st = measure_step(be, ctx, x, &p->mo, &s, wrong, &local, &converged);
        t1 = dl_now();
        s.stop = p->mo.iters > 0 ? DL_STOP_FIXED : converged ? DL_STOP_CI
                 : s.steps >= p->mo.max_iters ? DL_STOP_MAX_ITERS : DL_STOP_BUDGET;
        s.checked = p->mo.check && !dl_backend_has(be, DL_CAP_MODELLED);
    }
    if (st == DL_OK && s.steps > 0)
        st = report(&s, (int32_t)step, x, be, ctx, wrong, converged, t1 - t0, cb, arg);
    free(wrong);
    step_free(&s);
    return st;
}

dl_status_t dl_step_plan_run(const dl_plan_t *p, const dl_backend_ops_t *be, void *bctx,
                             const dl_xcomm_t *x, dl_result_cb_t cb, void *arg)
{
    for (size_t i = 0; i < p->steps.n; i++) {
        if (!p->steps.v[i].ncalls) /* nothing to time */
            continue;
        dl_status_t st = one_step(p, i, be, bctx, x, cb, arg);
        if (st != DL_OK)
            return st;
    }
    return DL_OK;
}
