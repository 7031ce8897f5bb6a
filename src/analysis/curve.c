/* A curve: one profile's rows of one collective, by size, in the dtype, op
 * and placement that best stand for it (float32, sum, out-of-place first),
 * with the figures report reads off it. */
#include "analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_bytes(const void *a, const void *b)
{
    uint64_t x = (*(const dl_row_t *const *)a)->bytes, y = (*(const dl_row_t *const *)b)->bytes;
    return x < y ? -1 : x > y;
}

static int score(const dl_row_t *r)
{
    return 4 * !strcmp(r->dtype, "float32") + 2 * (!strcmp(r->op, "sum") || !strcmp(r->op, "none")) +
           !strcmp(r->placement, "out");
}

static int same_kind(const dl_row_t *a, const dl_row_t *b)
{
    return !strcmp(a->dtype, b->dtype) && !strcmp(a->op, b->op) &&
           !strcmp(a->placement, b->placement) && a->group == b->group; /* --split: one group */
}

/* The figures: peak, sizes reaching 50% / 90% of it, latency floor. */
static void figures(dl_curve_t *c)
{
    c->use_algbw = 1;
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i]->busbw > 0)
            c->use_algbw = 0;
    c->peak = 0;
    c->floor_us = INFINITY;
    for (size_t i = 0; i < c->n; i++) {
        double bw = dl_curve_bw(c, i);
        if (bw > c->peak) {
            c->peak = bw;
            c->peak_i = i;
        }
        if (c->v[i]->bytes <= DL_SMALL_BYTES && c->v[i]->time_us < c->floor_us) {
            c->floor_us = c->v[i]->time_us;
            c->floor_i = i;
        }
    }
    c->i50 = c->i90 = c->peak_i;
    /* The smallest size that reaches the level. */
    for (size_t i = 0; i <= c->peak_i; i++)
        if (dl_curve_bw(c, i) >= 0.5 * c->peak) {
            c->i50 = i;
            break;
        }
    for (size_t i = 0; i <= c->peak_i; i++)
        if (dl_curve_bw(c, i) >= 0.9 * c->peak) {
            c->i90 = i;
            break;
        }
    if (!isfinite(c->floor_us)) { /* no small sizes: the smallest one measured */
        c->floor_us = c->v[0]->time_us;
        c->floor_i = 0;
    }
}

double dl_curve_bw(const dl_curve_t *c, size_t i)
{
    double bw = c->use_algbw ? c->v[i]->algbw : c->v[i]->busbw;
    return isfinite(bw) ? bw : 0;
}

dl_status_t dl_curve_get(const dl_record_t *r, const char *profile, const char *coll, dl_curve_t *c)
{
    return dl_curve_get_group(r, profile, coll, -1, c);
}

dl_status_t dl_curve_get_group(const dl_record_t *r, const char *profile, const char *coll, int group,
                               dl_curve_t *c)
{
    memset(c, 0, sizeof(*c));
    const dl_row_t *best = NULL;
    for (size_t i = 0; i < r->nrows; i++) {
        const dl_row_t *x = &r->rows[i];
        if (!strcmp(x->profile, profile) && !strcmp(x->collective, coll) && x->time_us > 0 &&
            (group < 0 || x->group == group) && (!best || score(x) > score(best)))
            best = x;
    }
    if (!best)
        return DL_ERR_INPUT;
    c->v = malloc(r->nrows * sizeof(*c->v));
    if (!c->v)
        return DL_ERR_NOMEM;
    for (size_t i = 0; i < r->nrows; i++) {
        const dl_row_t *x = &r->rows[i];
        if (!strcmp(x->profile, profile) && !strcmp(x->collective, coll) && x->time_us > 0 &&
            same_kind(x, best))
            c->v[c->n++] = x;
    }
    qsort(c->v, c->n, sizeof(*c->v), cmp_bytes);
    size_t k = 0; /* a size measured twice counts once (the first) */
    for (size_t i = 0; i < c->n; i++)
        if (k == 0 || c->v[i]->bytes != c->v[k - 1]->bytes)
            c->v[k++] = c->v[i];
    c->n = k;
    figures(c);
    return DL_OK;
}

void dl_curve_free(dl_curve_t *c)
{
    free(c->v);
    c->v = NULL;
}

/* Time at a size: the row's own, or scaled linearly in bytes from the
 * nearest row below (the bandwidth-bound part of the curve). */
double dl_curve_time_at(const dl_curve_t *c, uint64_t bytes)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i]->bytes <= bytes)
            k = i;
    const dl_row_t *r = c->v[k];
    if (r->bytes == bytes || r->bytes == 0)
        return r->time_us;
    return r->time_us * (double)bytes / (double)r->bytes;
}
