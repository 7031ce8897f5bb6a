/* A round of probes and the sequential test that stops each probe as soon
 * as its confidence interval decides (plan.h). */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

dl_status_t pf_round_init(pf_round_t *r, const char *stage, uint64_t bytes)
{
    memset(r, 0, sizeof(*r));
    r->stage = stage;
    r->bytes = bytes;
    r->start = calloc(1, sizeof(int));
    return r->start ? DL_OK : DL_ERR_NOMEM;
}

/* Room for one more probe of n hosts. */
static int room(pf_round_t *r, int n)
{
    if (r->nhosts_used + n > r->hosts_cap) {
        int c = 2 * (r->nhosts_used + n) + 16;
        int *h = realloc(r->hosts, (size_t)c * sizeof(int));
        if (!h)
            return -1;
        r->hosts = h;
        r->hosts_cap = c;
    }
    if (r->nprobes + 1 <= r->cap)
        return 0;
    int c = 2 * r->cap + 16;
    int *rail = realloc(r->rail, (size_t)c * sizeof(int));
    if (rail)
        r->rail = rail;
    int *ctl = realloc(r->control, (size_t)c * sizeof(int));
    if (ctl)
        r->control = ctl;
    int *st = realloc(r->start, (size_t)(c + 1) * sizeof(int));
    if (st)
        r->start = st;
    pf_outcome_t *o = realloc(r->out, (size_t)c * sizeof(pf_outcome_t));
    if (o)
        r->out = o;
    double *nom = realloc(r->nominal, (size_t)c * sizeof(double));
    if (nom)
        r->nominal = nom;
    if (!rail || !ctl || !st || !o || !nom)
        return -1;
    r->cap = c;
    return 0;
}

int pf_round_add(pf_round_t *r, const int *hosts, int n, int rail, int control)
{
    if (room(r, n))
        return -1;
    memcpy(r->hosts + r->nhosts_used, hosts, (size_t)n * sizeof(int));
    r->nhosts_used += n;
    r->rail[r->nprobes] = rail;
    r->control[r->nprobes] = control;
    r->nominal[r->nprobes] = 1;
    r->start[r->nprobes + 1] = r->nhosts_used;
    return r->nprobes++;
}

void pf_round_free(pf_round_t *r)
{
    free(r->start);
    free(r->hosts);
    free(r->rail);
    free(r->control);
    free(r->out);
    free(r->nominal);
    memset(r, 0, sizeof(*r));
}

/* The reference: the median of the controls' means (without controls, the
 * quantile q of every probe's: the median, or lower where few probes may be
 * half slow), and its standard error (the median's, about 1.25 x the mean's). */
static void reference(pf_round_t *r, const double *sum, const double *sum2, const int *n, double q)
{
    int any = 0, k = 0;
    for (int p = 0; p < r->nprobes; p++)
        any |= r->control[p];
    if (!any && r->fixed_ref)
        return;
    double *m = malloc((size_t)r->nprobes * sizeof(double)), var = 0;
    for (int p = 0; m && p < r->nprobes; p++)
        if (!any || r->control[p]) {
            m[k++] = sum[p] / n[p];
            double v = sum2[p] / n[p] - m[k - 1] * m[k - 1];
            var += (v > 0 ? v : 0) / n[p];
        }
    if (!k) {
        free(m);
        return;
    }
    r->ref = dl_quantile(m, (size_t)k, any || q <= 0 ? 0.5 : q); /* interpolated */
    r->ref_se = 1.25 * sqrt(var / k / k);
    free(m);
}

static pf_call_t decide(const pf_round_t *r, const pf_judge_cfg_t *j, double s, double s2,
                        int n, pf_outcome_t *o)
{
    o->iters = n;
    o->mean = s / n;
    double v = n > 1 ? (s2 - s * s / n) / (n - 1) : 0;
    o->sd = v > 0 ? sqrt(v) : 0;
    o->excess = o->mean - r->ref;
    o->se = sqrt(o->sd * o->sd / n + r->ref_se * r->ref_se);
    if (o->excess - j->z * o->se > r->theta)
        return PF_SLOW;
    if (o->excess + j->z * o->se < r->theta)
        return PF_FINE;
    return PF_UNDECIDED;
}

static void add(pf_round_t *r, pf_sample_fn f, void *ctx, int p, double *sum, double *sum2,
                int *n)
{
    double t = f(ctx, r, p), x = log(t / r->nominal[p]);
    sum[p] += x;
    sum2[p] += x * x;
    n[p]++;
    r->out[p].time_s += t;
}

dl_status_t pf_judge_round(pf_round_t *r, const pf_judge_cfg_t *j, pf_sample_fn f, void *ctx,
                           double setup_s)
{
    int np = r->nprobes, open = np;
    double *sum = calloc((size_t)np + 1, sizeof(double)), *sum2 = calloc((size_t)np + 1, sizeof(double));
    int *n = calloc((size_t)np + 1, sizeof(int));
    if (!sum || !sum2 || !n) {
        free(sum), free(sum2), free(n);
        return DL_ERR_NOMEM;
    }
    memset(r->out, 0, (size_t)np * sizeof(pf_outcome_t));
    for (int p = 0; p < np; p++)
        for (int i = 0; i < j->nmin; i++)
            add(r, f, ctx, p, sum, sum2, n);
    int controls = 0;
    for (int p = 0; p < np; p++)
        controls += r->control[p];
    reference(r, sum, sum2, n, j->ref_q);
    for (int it = j->nmin; open && it <= j->nmax; it++) {
        open = 0;
        for (int p = 0; it > j->nmin && p < np; p++)
            if (r->out[p].call == PF_UNDECIDED || r->control[p])
                add(r, f, ctx, p, sum, sum2, n);
        if (controls && it > j->nmin) /* the controls' reference firms up as they run */
            reference(r, sum, sum2, n, j->ref_q);
        for (int p = 0; p < np; p++) {
            if (r->out[p].call != PF_UNDECIDED && !r->control[p] && it > j->nmin)
                continue;
            r->out[p].call = decide(r, j, sum[p], sum2[p], n[p], &r->out[p]);
            open += r->out[p].call == PF_UNDECIDED && !r->control[p];
        }
    }
    double longest = 0;
    for (int p = 0; p < np; p++) {
        longest = r->out[p].time_s * (n[p] + 1.0) / n[p] > longest
                      ? r->out[p].time_s * (n[p] + 1.0) / n[p] : longest; /* + warm-up */
        r->max_iters = n[p] > r->max_iters ? n[p] : r->max_iters;
    }
    r->wall_s = setup_s + longest;
    free(sum), free(sum2), free(n);
    return DL_OK;
}

int pf_judge_samples(pf_round_t *r, const pf_judge_cfg_t *j, double *const *t, const int *n)
{
    int np = r->nprobes, open = 0;
    double *sum = calloc((size_t)np + 1, sizeof(double)), *sum2 = calloc((size_t)np + 1, sizeof(double));
    int *cnt = calloc((size_t)np + 1, sizeof(int));
    if (!sum || !sum2 || !cnt) {
        free(sum), free(sum2), free(cnt);
        return -1;
    }
    for (int p = 0; p < np; p++) {
        r->out[p] = (pf_outcome_t){0};
        for (int i = 0; i < n[p]; i++) {
            double x = log(t[p][i] / r->nominal[p]);
            sum[p] += x, sum2[p] += x * x, r->out[p].time_s += t[p][i];
        }
        cnt[p] = n[p] > 0 ? n[p] : 1; /* never measured: no mean, and undecided below */
        r->max_iters = n[p] > r->max_iters ? n[p] : r->max_iters;
    }
    reference(r, sum, sum2, cnt, j->ref_q);
    for (int p = 0; p < np; p++) {
        pf_call_t c = decide(r, j, sum[p], sum2[p], cnt[p], &r->out[p]);
        r->out[p].iters = n[p];
        r->out[p].call = n[p] >= j->nmin ? c : PF_UNDECIDED;
        open += r->out[p].call == PF_UNDECIDED && !r->control[p] && n[p] < j->nmax;
    }
    free(sum), free(sum2), free(cnt);
    return open;
}

double pf_judge_confidence(const pf_round_t *r, int p)
{
    const pf_outcome_t *o = &r->out[p];
    if (o->se <= 0)
        return 1;
    double z = fabs(o->excess - r->theta) / o->se;
    return 1 - 0.5 * erfc(z / sqrt(2)) ;
}
