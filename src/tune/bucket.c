/* How DDP and Horovod fuse a step's gradients, the backward-pass model that
 * says when each is ready, and the one-stream timeline of the calls. */
#include "tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void dl_ready_times(const dl_model_t *m, double backward_s, double *ready)
{
    double total = (double)dl_model_params(m), done = 0;
    for (size_t k = m->n; k-- > 0;) { /* backward: the last parameter first */
        done += (double)m->t[k].numel;
        ready[k] = total > 0 ? backward_s * done / total : 0;
    }
}

void dl_buckets_free(dl_buckets_t *bs)
{
    for (size_t i = 0; i < bs->n; i++)
        free(bs->b[i].idx);
    free(bs->b);
    bs->b = NULL;
    bs->n = 0;
}

static dl_bucket_t *bucket_new(dl_buckets_t *bs, size_t cap_tensors, dl_dtype_t dt)
{
    dl_bucket_t *nb = realloc(bs->b, (bs->n + 1) * sizeof(*nb));
    if (!nb)
        return NULL;
    bs->b = nb;
    dl_bucket_t *b = &bs->b[bs->n];
    memset(b, 0, sizeof(*b));
    b->idx = malloc((cap_tensors ? cap_tensors : 1) * sizeof(size_t));
    if (!b->idx)
        return NULL;
    b->dtype = dt;
    bs->n++;
    return b;
}

static void bucket_put(dl_bucket_t *b, const dl_model_t *m, size_t i, const double *ready)
{
    b->idx[b->n++] = i;
    b->bytes += dl_tensor_bytes(&m->t[i]);
    if (ready && ready[i] > b->ready_s)
        b->ready_s = ready[i];
}

/* ---- PyTorch DDP ---- */

/* One open bucket per dtype, and where that dtype is in the limits. */
typedef struct {
    size_t *idx, n;
    uint64_t bytes;
    size_t limit; /* index into limits */
    int used;
} ddp_open_t;

static dl_status_t emit(dl_buckets_t *out, const dl_model_t *m, ddp_open_t *g, dl_dtype_t dt,
                        const double *ready)
{
    dl_bucket_t *b = bucket_new(out, g->n, dt);
    if (!b)
        return DL_ERR_NOMEM;
    for (size_t k = 0; k < g->n; k++)
        bucket_put(b, m, g->idx[k], ready);
    g->n = 0;
    g->bytes = 0;
    return DL_OK;
}

dl_status_t dl_bucket_ddp_order(const dl_model_t *m, const size_t *order, size_t norder,
                                const uint64_t *limits, size_t nlimits, const double *ready,
                                dl_buckets_t *out)
{
    memset(out, 0, sizeof(*out));
    ddp_open_t g[DL_DT_COUNT];
    int first_seen[DL_DT_COUNT], nseen = 0;
    memset(g, 0, sizeof(g));
    dl_status_t st = DL_OK;
    for (size_t k = 0; k < norder && st == DL_OK; k++) {
        size_t i = order[k];
        dl_dtype_t dt = m->t[i].dtype;
        ddp_open_t *o = &g[dt];
        if (!o->used) {
            o->used = 1;
            first_seen[nseen++] = dt;
            o->idx = malloc(norder * sizeof(size_t));
            if (!o->idx) {
                st = DL_ERR_NOMEM;
                break;
            }
        }
        o->idx[o->n++] = i;
        o->bytes += dl_tensor_bytes(&m->t[i]);
        /* A bucket closes once it reaches its limit (it may pass it: a big
         * tensor is never split); then this dtype moves to the next limit. */
        if (o->bytes >= limits[o->limit]) {
            st = emit(out, m, o, dt, ready);
            if (o->limit + 1 < nlimits)
                o->limit++;
        }
    }
    for (int s = 0; s < nseen && st == DL_OK; s++) /* the open ones, by dtype first seen */
        if (g[first_seen[s]].n)
            st = emit(out, m, &g[first_seen[s]], (dl_dtype_t)first_seen[s], ready);
    for (int d = 0; d < DL_DT_COUNT; d++)
        free(g[d].idx);
    if (st != DL_OK)
        dl_buckets_free(out);
    return st;
}

dl_status_t dl_bucket_ddp(const dl_model_t *m, const uint64_t *limits, size_t nlimits,
                          const double *ready, dl_buckets_t *out)
{
    size_t *order = malloc((m->n ? m->n : 1) * sizeof(size_t));
    if (!order)
        return DL_ERR_NOMEM;
    for (size_t k = 0; k < m->n; k++)
        order[k] = m->n - 1 - k;
    dl_status_t st = dl_bucket_ddp_order(m, order, m->n, limits, nlimits, ready, out);
    free(order);
    return st;
}

/* ---- Horovod ---- */

/* The responses of one cycle (tensor indices, ready order) fused in turn. */
static dl_status_t fuse_cycle(const dl_model_t *m, size_t *q, size_t nq, uint64_t threshold,
                              double tick, dl_buckets_t *out)
{
    while (nq > 0) {
        dl_bucket_t *b = bucket_new(out, nq, m->t[q[0]].dtype);
        if (!b)
            return DL_ERR_NOMEM;
        bucket_put(b, m, q[0], NULL);
        b->ready_s = tick;
        size_t rest = 0, k = 1; /* q[0..rest): what stays for the next response */
        uint64_t skipped = 0;
        for (; k < nq; k++) {
            const dl_tensor_t *t = &m->t[q[k]];
            uint64_t bytes = dl_tensor_bytes(t);
            if (t->dtype == b->dtype && b->bytes + bytes <= threshold) {
                bucket_put(b, m, q[k], NULL);
                continue;
            }
            skipped += bytes;
            if (b->bytes + skipped > threshold)
                break;
            q[rest++] = q[k];
        }
        /* The skipped ones, then the ones the walk never reached. */
        for (; k < nq; k++)
            q[rest++] = q[k];
        nq = rest;
    }
    return DL_OK;
}

dl_status_t dl_bucket_horovod(const dl_model_t *m, uint64_t threshold, double cycle_s,
                              const double *ready, dl_buckets_t *out)
{
    memset(out, 0, sizeof(*out));
    size_t *q = malloc((m->n ? m->n : 1) * sizeof(size_t));
    if (!q)
        return DL_ERR_NOMEM;
    dl_status_t st = DL_OK;
    size_t k = m->n; /* ready order: the last parameter first */
    while (k > 0 && st == DL_OK) {
        /* The first tick at or after the next tensor's ready time; a
         * tensor ready exactly at a tick makes that tick. */
        double c = ceil(ready[k - 1] / cycle_s - 1e-9);
        double tick = (c < 1 ? 1 : c) * cycle_s;
        size_t nq = 0;
        while (k > 0 && ready[k - 1] <= tick * (1 + 1e-12))
            q[nq++] = --k;
        st = fuse_cycle(m, q, nq, threshold, tick, out);
    }
    free(q);
    if (st != DL_OK)
        dl_buckets_free(out);
    return st;
}

/* ---- the timeline ---- */

void dl_timeline(const dl_buckets_t *bs, const double *call_s, double backward_s,
                 dl_timeline_t *out)
{
    double end = 0, comm = 0;
    for (size_t k = 0; k < bs->n; k++) {
        double start = bs->b[k].ready_s > end ? bs->b[k].ready_s : end;
        end = start + call_s[k];
        comm += call_s[k];
    }
    out->comm_s = comm;
    out->end_s = end;
    out->exposed_s = end > backward_s ? end - backward_s : 0;
}
