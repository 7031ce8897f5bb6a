/* Walking a sweep plan: the nesting that gives each collective its table. */
#include "measure.h"

#include <stdlib.h>
#include <string.h>

/* Whether the backend runs this (collective, dtype, op) at all. */
static int supported(const dl_backend_ops_t *be, const dl_coll_t *coll, int dt, int op)
{
    if (!be || !be->supports)
        return 1;
    dl_case_t c;
    char why[160];
    dl_case_init(&c, coll, (dl_dtype_t)dt, (dl_op_t)op, DL_PLACE_OUT, 0, 8, 1, 0);
    return be->supports(&c, why, sizeof(why));
}

/* Whether sizes[s] becomes the bytes the size before it already measured
 * on `ranks` (8 B and 16 B of all-gather over 4 ranks are both one element
 * each; sizes grow, so the one before is the only one to ask): a size is
 * measured once, under the first size that asked for it. */
static int measured_before(const dl_plan_t *p, const dl_coll_t *coll, int dt, size_t s, int ranks)
{
    dl_case_t a, b;
    if (s == 0)
        return 0;
    dl_case_init(&a, coll, (dl_dtype_t)dt, DL_OP_SUM, DL_PLACE_OUT, p->root, p->sweep.sizes[s - 1], ranks, 0);
    dl_case_init(&b, coll, (dl_dtype_t)dt, DL_OP_SUM, DL_PLACE_OUT, p->root, p->sweep.sizes[s], ranks, 0);
    return a.counts.bytes == b.counts.bytes;
}

size_t dl_plan_cases(const dl_plan_t *p, const dl_backend_ops_t *be, int ranks)
{
    size_t n = 0;
    if (p->kind == DL_PLAN_STEPS) { /* a result per call, and one per step */
        for (size_t i = 0; i < p->steps.n; i++)
            n += p->steps.v[i].ncalls ? p->steps.v[i].ncalls + 1 : 0;
        return n;
    }
    for (int c = 0; c < DL_COLL_COUNT; c++) {
        if (!(p->sweep.colls & (1u << c)))
            continue;
        for (int dt = 0; dt < DL_DT_COUNT; dt++)
            for (int op = 0; op < DL_OP_COUNT; op++)
                if ((p->sweep.dtypes & (1u << dt)) &&
                    (dl_colls[c]->has_op ? (p->sweep.ops & (1u << op)) != 0 : op == 0) &&
                    supported(be, dl_colls[c], dt, op))
                    for (size_t s = 0; s < p->sweep.nsizes; s++)
                        n += measured_before(p, dl_colls[c], dt, s, ranks)
                                 ? 0 : (size_t)__builtin_popcount(p->places);
    }
    return n;
}

/* --split: every group's record of the case, to every rank, in group
 * order (world rank 0 writes them all). A group's rank 0 packs its record
 * into its slot of one vector, the others leave theirs zero, and a sum over
 * the world hands each slot to everyone (the exchange has no gather of
 * bytes; records are a few hundred bytes). */
static dl_status_t share_groups(const dl_xcomm_t *x, const dl_result_t *mine, dl_result_cb_t cb,
                                void *arg)
{
    const dl_xcomm_t *w = x->all;
    int k = x->groups;
    void *buf = NULL;
    uint32_t len = 0;
    dl_status_t st = x->rank == 0 ? dl_result_pack(mine, &buf, &len) : DL_OK;
    double *lens = calloc((size_t)k, sizeof(double));
    if (!lens) {
        free(buf);
        return DL_ERR_NOMEM;
    }
    lens[x->group] = len;
    st = dl_status_worse(st, w->max_doubles(w->arg, lens, (size_t)k)); /* every rank calls */
    size_t words = 0;
    for (int g = 0; g < k; g++)
        words = (size_t)lens[g] > words * 8 ? ((size_t)lens[g] + 7) / 8 : words;
    uint64_t *all = calloc((size_t)k * words + 1, sizeof(uint64_t));
    if (!all)
        st = DL_ERR_NOMEM;
    if (all && buf)
        memcpy(all + (size_t)x->group * words, buf, len);
    if (st == DL_OK)
        st = w->sum_u64(w->arg, all, (size_t)k * words);
    for (int g = 0; st == DL_OK && g < k; g++) {
        dl_result_t r;
        st = dl_result_unpack(all + (size_t)g * words, (uint32_t)lens[g], &r);
        if (st == DL_OK) {
            r.group = g;
            st = cb(arg, &r);
            dl_result_free(&r);
        }
    }
    free(buf);
    free(lens);
    free(all);
    return st;
}

/* The ranks a case is sized for: the figures' (a model's ranks, not the
 * processes carrying them: 8 B of all-gather over 64 modelled ranks is
 * 256 B, one element each). */
static int plan_ranks(const dl_backend_ops_t *be, void *bctx, const dl_xcomm_t *x)
{
    dl_backend_traits_t tr;
    dl_backend_traits(be, bctx, x->nranks, &tr);
    return tr.bus_ranks; /* dl_backend_traits: nranks unless the backend says */
}

static dl_status_t run_one(const dl_plan_t *p, const dl_backend_ops_t *be, void *bctx,
                           const dl_xcomm_t *x, dl_result_cb_t cb, void *arg,
                           const dl_coll_t *coll, int dt, int op, uint64_t size, int place)
{
    dl_case_t c;
    dl_result_t r;
    dl_backend_traits_t tr; /* the case's ranks (as plan_ranks) and what is left out */
    dl_backend_traits(be, bctx, x->nranks, &tr);
    dl_case_init(&c, coll, (dl_dtype_t)dt, (dl_op_t)op, (dl_place_t)place, p->root, size,
                 tr.bus_ranks, x->rank % tr.bus_ranks);
    char why[256];
    if (tr.colls_off & (1u << coll->id)) {
        char algos[64];
        dl_nccl_algos_of(coll->id, algos, sizeof(algos));
        snprintf(why, sizeof(why), "%s (NCCL runs %s with %s)", tr.off_why, coll->name, algos);
    } else if (!be->supports || be->supports(&c, why, sizeof(why))) {
        why[0] = 0;
    }
    if (why[0]) {
        /* Every rank decides alike; rank 0 says so once per combination
         * (a collective left out whole: once). */
        int first = x->rank == 0 && x->group == 0 && size == p->sweep.sizes[0] &&
                    place == (p->places & 1 ? 0 : 1);
        if (first && (tr.colls_off & (1u << coll->id)))
            first = dt == __builtin_ctz(p->sweep.dtypes) &&
                    (!coll->has_op || op == __builtin_ctz(p->sweep.ops));
        if (first && (tr.colls_off & (1u << coll->id)))
            dl_warn("%s left out: %s", coll->name, why);
        else if (first)
            dl_warn("%s %s %s left out: %s", coll->name, dl_dtype_names[dt],
                    coll->has_op ? dl_op_names[op] : "", why);
        return DL_OK;
    }
    dl_status_t st = dl_measure_case(be, bctx, x, &p->mo, &c, &r);
    if (st == DL_OK)
        st = x->all ? share_groups(x, &r, cb, arg) : cb(arg, &r);
    dl_result_free(&r);
    return st;
}

dl_status_t dl_plan_run(const dl_plan_t *p, const dl_backend_ops_t *be, void *bctx,
                        const dl_xcomm_t *x, dl_result_cb_t cb, void *arg)
{
    if (p->kind == DL_PLAN_STEPS)
        return dl_step_plan_run(p, be, bctx, x, cb, arg);
    for (int ci = 0; ci < DL_COLL_COUNT; ci++) {
        const dl_coll_t *coll = dl_colls[ci];
        if (!(p->sweep.colls & (1u << ci)))
            continue;
        for (int dt = 0; dt < DL_DT_COUNT; dt++) {
            if (!(p->sweep.dtypes & (1u << dt)))
                continue;
            for (int op = 0; op < DL_OP_COUNT; op++) {
                if (coll->has_op ? !(p->sweep.ops & (1u << op)) : op != 0)
                    continue;
                for (size_t s = 0; s < p->sweep.nsizes; s++)
                    for (int place = 0; place < 2; place++) {
                        if (!(p->places & (1u << place)) ||
                            measured_before(p, coll, dt, s, plan_ranks(be, bctx, x)))
                            continue;
                        dl_status_t st = run_one(p, be, bctx, x, cb, arg, coll, dt, op,
                                                 p->sweep.sizes[s], place);
                        if (st != DL_OK)
                            return st;
                    }
            }
        }
    }
    return DL_OK;
}

uint64_t dl_plan_max_bytes(const dl_plan_t *p)
{
    uint64_t max = 0;
    for (size_t i = 0; p->kind == DL_PLAN_SWEEP && i < p->sweep.nsizes; i++)
        max = p->sweep.sizes[i] > max ? p->sweep.sizes[i] : max;
    for (size_t i = 0; p->kind == DL_PLAN_STEPS && i < p->steps.n; i++)
        for (size_t k = 0; k < p->steps.v[i].ncalls; k++)
            max = p->steps.v[i].calls[k].bytes > max ? p->steps.v[i].calls[k].bytes : max;
    return max;
}
