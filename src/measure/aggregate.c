/* How a row's per-iteration time is formed from the ranks' times (-a). */
#include "measure.h"

#include <math.h>
#include <string.h>

const char *const dl_agg_names[DL_AGG_COUNT] = {"max", "mean", "min", "rank0"};

/* Mean: a sum of whole picoseconds (exact to 1 ps up to 1.8e7 s per
 * element), as the exchange object sums integers, not doubles. */
#define PS 1e12

dl_status_t dl_agg_over_ranks(const dl_xcomm_t *x, int agg, double *v, size_t n, uint64_t *scratch)
{
    dl_status_t st;
    switch (agg) {
    case DL_AGG_MIN: /* the max of the negated times */
        for (size_t i = 0; i < n; i++)
            v[i] = -v[i];
        st = x->max_doubles(x->arg, v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = -v[i];
        return st;
    case DL_AGG_RANK0: /* times are >= 0: the max of rank 0's and zeros */
        if (x->rank != 0)
            memset(v, 0, n * sizeof(*v));
        return x->max_doubles(x->arg, v, n);
    case DL_AGG_MEAN:
        for (size_t i = 0; i < n; i++)
            scratch[i] = v[i] > 0 ? (uint64_t)llround(v[i] * PS) : 0;
        st = x->sum_u64(x->arg, scratch, n);
        for (size_t i = 0; i < n; i++)
            v[i] = (double)scratch[i] / PS / x->nranks;
        return st;
    default:
        return x->max_doubles(x->arg, v, n);
    }
}
