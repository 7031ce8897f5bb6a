/* Sample statistics: mean, spread, percentiles, confidence interval. */
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Percentile by linear interpolation between closest ranks (sorted input). */
static double percentile(const double *s, size_t n, double p)
{
    if (n == 1)
        return s[0];
    double pos = p * (double)(n - 1);
    size_t lo = (size_t)pos;
    double frac = pos - (double)lo;
    return lo + 1 < n ? s[lo] + frac * (s[lo + 1] - s[lo]) : s[lo];
}

double dl_t95(size_t df)
{
    static const double t[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                               2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                               2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                               2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df == 0)
        return INFINITY;
    if (df < DL_ARRAY_SIZE(t))
        return t[df];
    if (df < 60)
        return 2.000 + (2.042 - 2.000) * (60.0 - df) / 30.0;
    if (df < 120)
        return 1.980 + (2.000 - 1.980) * (120.0 - df) / 60.0;
    /* Cornish-Fisher: t = z + (z^3 + z) / 4df, within 1e-4 of the table from
     * df 120 on (a flat 1.960 jumped down 1% at 120 and narrowed CIs). */
    return 1.960 + 2.372 / (double)df;
}

/* Welford: stable for many samples of similar size. */
void dl_running_add(dl_running_t *r, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double d = v[i] - r->mean;
        r->n++;
        r->mean += d / (double)r->n;
        r->m2 += d * (v[i] - r->mean);
    }
}

double dl_running_stdev(const dl_running_t *r)
{
    return r->n > 1 ? sqrt(r->m2 / (double)(r->n - 1)) : 0;
}

double dl_running_ci95(const dl_running_t *r)
{
    return r->n > 1 ? dl_t95(r->n - 1) * dl_running_stdev(r) / sqrt((double)r->n) : INFINITY;
}

dl_status_t dl_stats_compute(const double *samples, size_t n, dl_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    if (n == 0)
        return DL_ERR_INTERNAL;
    double *s = malloc(n * sizeof(*s));
    if (!s)
        return DL_ERR_NOMEM;
    memcpy(s, samples, n * sizeof(*s));
    qsort(s, n, sizeof(*s), cmp_double);
    dl_running_t r = {0};
    dl_running_add(&r, s, n);
    out->n = n;
    out->mean = r.mean;
    out->stdev = dl_running_stdev(&r);
    out->min = s[0];
    out->max = s[n - 1];
    out->p50 = percentile(s, n, 0.50);
    out->p95 = percentile(s, n, 0.95);
    out->p99 = percentile(s, n, 0.99);
    out->ci95 = dl_running_ci95(&r);
    free(s);
    return DL_OK;
}

double dl_quantile(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double *s = malloc(n * sizeof(*s));
    if (!s)
        return NAN;
    memcpy(s, v, n * sizeof(*s));
    qsort(s, n, sizeof(*s), cmp_double);
    double x = percentile(s, n, q);
    free(s);
    return x;
}

double dl_median(const double *v, size_t n) { return dl_quantile(v, n, 0.5); }

double dl_mad(const double *v, size_t n, double median)
{
    if (n == 0)
        return NAN;
    double *d = malloc(n * sizeof(*d));
    if (!d)
        return NAN;
    for (size_t i = 0; i < n; i++)
        d[i] = fabs(v[i] - median);
    double m = dl_median(d, n);
    free(d);
    return 1.4826 * m;
}
