/* Node pairs: every pair of hosts (a round-robin tournament, disjoint pairs
 * at once) or a ring of pairs. A pair is all ranks of its two hosts, so each
 * GPU and NIC of both takes part. A host's figure is its best pair: a
 * host with a bad link is slow with every peer, a healthy one is fast with
 * at least one healthy peer, so the best pair separates them even when the
 * bad host spoils half of all pairs (4 hosts). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int nh, rounds;
    int *partner;    /* [rounds][nh] */
    double *pair;    /* [nh][nh] busbw, -1 unmeasured */
    int *round_of;   /* [nh][nh] */
    double *best;    /* [nh] */
    int *low;        /* [nh] */
    int *confirmed;  /* [nh] */
    unsigned char *link; /* [nh][nh] a slow link named */
} pairs_t;

static void pairs_free(pairs_t *p)
{
    free(p->partner);
    free(p->pair);
    free(p->round_of);
    free(p->best);
    free(p->low);
    free(p->confirmed);
    free(p->link);
}

static dl_status_t run_rounds(pf_ctx_t *c, pairs_t *p)
{
    int nh = p->nh;
    int *color = malloc((size_t)c->nranks * sizeof(int));
    double *fig = malloc((size_t)nh * sizeof(double));
    uint64_t *wrong = malloc((size_t)nh * sizeof(uint64_t));
    dl_status_t st = color && fig && wrong ? DL_OK : DL_ERR_NOMEM;
    for (int r = 0; st == DL_OK && r < p->rounds; r++) {
        const int *pt = p->partner + (size_t)r * nh;
        for (int k = 0; k < c->nranks; k++) {
            int h = c->lay.host_of[k], q = pt[h];
            color[k] = q < 0 ? -1 : (h < q ? h : q);
        }
        char step[64];
        snprintf(step, sizeof(step), "pair round %d", r + 1);
        pf_step(step);
        st = pf_measure_members(c, color, nh, DL_COLL_ALLREDUCE, c->o->scope_bytes, fig, wrong);
        for (int h = 0; st == DL_OK && h < nh; h++) {
            int q = pt[h];
            if (q <= h)
                continue;
            p->pair[h * nh + q] = p->pair[q * nh + h] = fig[h];
            p->round_of[h * nh + q] = p->round_of[q * nh + h] = r;
            if (wrong[h]) {
                pf_blame_pair(c, h, q);
                char subj[600];
                snprintf(subj, sizeof(subj), "%s-%s", c->lay.names[h], c->lay.names[q]);
                pf_check(c, DL_PF_FAIL, "correctness", "pair", subj, NULL,
                         "allreduce across the pair: %llu wrong elements",
                         (unsigned long long)wrong[h]);
            }
        }
    }
    free(color);
    free(fig);
    free(wrong);
    return st;
}

/* The known-good peer of a suspect: of the hosts that were not suspects,
 * the one that did best with it (a bad host is slow with every peer; a
 * suspect by noise, or one beside a slow link, is cleared by its best). */
static int good_peer(const pairs_t *p, int s)
{
    int good = -1;
    for (int h = 0; h < p->nh; h++)
        if (h != s && !p->low[h] && p->best[h] >= 0 &&
            (good < 0 || p->pair[s * p->nh + h] > p->pair[s * p->nh + good]))
            good = h;
    return good;
}

/* Suspects against a known-good peer, one at a time. */
static dl_status_t retest(pf_ctx_t *c, pairs_t *p, double median, cJSON *suspects)
{
    int nh = p->nh;
    int *color = malloc((size_t)c->nranks * sizeof(int));
    dl_status_t st = color ? DL_OK : DL_ERR_NOMEM;
    for (int h = 0; st == DL_OK && h < nh; h++) {
        int good = good_peer(p, h);
        if (!p->low[h] || good < 0)
            continue;
        for (int k = 0; k < c->nranks; k++)
            color[k] = c->lay.host_of[k] == h || c->lay.host_of[k] == good ? 0 : -1;
        double fig = -1;
        p->confirmed[h] = 1;
        for (int t = 0; st == DL_OK && p->confirmed[h] && t < PF_RETESTS; t++) {
            pf_step("pair retest");
            st = pf_measure_members(c, color, 1, DL_COLL_ALLREDUCE, c->o->scope_bytes, &fig,
                                    NULL);
            p->confirmed[h] = fig >= 0 && pf_still_low(c, p->best, nh, h, fig);
        }
        if (c->rank == 0) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "scope", "pair");
            cJSON_AddStringToObject(o, "subject", c->lay.names[h]);
            cJSON_AddNumberToObject(o, "busbw_gbps", p->best[h]);
            cJSON_AddNumberToObject(o, "median_gbps", median);
            cJSON *r = cJSON_AddObjectToObject(o, "retest");
            cJSON_AddStringToObject(r, "peer", c->lay.names[good]);
            cJSON_AddNumberToObject(r, "busbw_gbps", fig);
            cJSON_AddBoolToObject(o, "confirmed", p->confirmed[h]);
            cJSON_AddItemToArray(suspects, o);
        }
        if (p->confirmed[h])
            pf_blame_host(c, h);
        cJSON *f = cJSON_CreateObject();
        cJSON_AddNumberToObject(f, "best_busbw_gbps", p->best[h]);
        cJSON_AddNumberToObject(f, "median_gbps", median);
        cJSON_AddNumberToObject(f, "retest_busbw_gbps", fig);
        pf_check(c, p->confirmed[h] ? DL_PF_FAIL : DL_PF_WARN, "bandwidth", "pair",
                 c->lay.names[h], f,
                 "best pair busbw %.3f GB/s, below %.0f%% of the median host %.3f; with %s "
                 "again: %.3f GB/s (%s)", p->best[h], 100 * c->o->min_fraction, median,
                 c->lay.names[good], fig, p->confirmed[h] ? "confirmed" : "not confirmed: noise");
    }
    free(color);
    return st;
}

/* A slow pair whose hosts are both fine elsewhere: the link between them
 * (a cable, a switch port on the way). Judged among the pairs of hosts not
 * named already, and retested alone. */
static dl_status_t slow_links(pf_ctx_t *c, pairs_t *p)
{
    int nh = p->nh, n = 0;
    int *a = malloc((size_t)nh * nh * sizeof(int)), *b = malloc((size_t)nh * nh * sizeof(int));
    double *v = malloc((size_t)nh * nh * sizeof(double));
    int *low = malloc((size_t)nh * nh * sizeof(int)), *color = malloc((size_t)c->nranks * sizeof(int));
    dl_status_t st = a && b && v && low && color ? DL_OK : DL_ERR_NOMEM;
    for (int x = 0; st == DL_OK && x < nh; x++)
        for (int y = x + 1; y < nh; y++)
            if (p->pair[x * nh + y] >= 0 && !p->confirmed[x] && !p->confirmed[y])
                a[n] = x, b[n] = y, v[n++] = p->pair[x * nh + y];
    double median = 0;
    if (st == DL_OK)
        dl_pf_low_outliers(v, n, c->o->min_fraction, c->o->mad_k, low, &median);
    for (int i = 0; st == DL_OK && i < n; i++) {
        if (!low[i])
            continue;
        for (int k = 0; k < c->nranks; k++)
            color[k] = c->lay.host_of[k] == a[i] || c->lay.host_of[k] == b[i] ? 0 : -1;
        double fig = -1;
        int confirmed = 1;
        for (int t = 0; st == DL_OK && confirmed && t < PF_RETESTS; t++) {
            pf_step("pair link retest");
            st = pf_measure_members(c, color, 1, DL_COLL_ALLREDUCE, c->o->scope_bytes, &fig, NULL);
            confirmed = fig >= 0 && pf_still_low(c, v, n, i, fig);
        }
        char subj[600];
        snprintf(subj, sizeof(subj), "%s-%s", c->lay.names[a[i]], c->lay.names[b[i]]);
        if (c->rank == 0) {
            cJSON *o = cJSON_CreateObject(), *r;
            cJSON_AddStringToObject(o, "scope", "pair-link");
            cJSON_AddStringToObject(o, "subject", subj);
            cJSON_AddNumberToObject(o, "busbw_gbps", v[i]);
            cJSON_AddNumberToObject(o, "median_gbps", median);
            r = cJSON_AddObjectToObject(o, "retest");
            cJSON_AddNumberToObject(r, "busbw_gbps", fig);
            cJSON_AddBoolToObject(o, "confirmed", confirmed);
            cJSON_AddItemToArray(c->suspects, o);
        }
        if (confirmed) {
            pf_blame_pair(c, a[i], b[i]);
            p->link[a[i] * nh + b[i]] = p->link[b[i] * nh + a[i]] = 1;
        }
        pf_check(c, confirmed ? DL_PF_FAIL : DL_PF_WARN, "bandwidth", "pair", subj, NULL,
                 "pair busbw %.3f GB/s, below %.0f%% of the median pair %.3f though both hosts "
                 "are fast elsewhere; alone: %.3f GB/s (%s)", v[i], 100 * c->o->min_fraction,
                 median, fig, confirmed ? "confirmed: the link between them" : "not confirmed: noise");
    }
    free(a);
    free(b);
    free(v);
    free(low);
    free(color);
    return st;
}

/* The pair figures as a host x host matrix (null: not measured, the
 * diagonal included) with the slow cells marked as the scope judged them,
 * slow(arg, a, b): the pair scope's every pair of a host it named (its row
 * and column) and each link it named (a cell and its mirror), and the plan
 * scope's the same of its findings. The figures are all there: a reader
 * sees what was judged and on what. */
void pf_pair_matrix_json(const pf_ctx_t *c, const double *pair, double median,
                         int (*slow)(const void *arg, int a, int b), const void *arg, cJSON *o)
{
    int nh = c->lay.nhosts;
    cJSON *m = cJSON_AddObjectToObject(o, "matrix"), *hs = cJSON_AddArrayToObject(m, "hosts");
    cJSON_AddNumberToObject(m, "median_gbps", median);
    cJSON *bw = cJSON_AddArrayToObject(m, "busbw_gbps"), *sl = cJSON_AddArrayToObject(m, "slow");
    for (int a = 0; a < nh; a++) {
        cJSON_AddItemToArray(hs, cJSON_CreateString(c->lay.names[a]));
        cJSON *row = cJSON_CreateArray(), *srow = cJSON_CreateArray();
        for (int b = 0; b < nh; b++) {
            double x = pair[a * nh + b];
            cJSON_AddItemToArray(row, x >= 0 ? cJSON_CreateNumber(x) : cJSON_CreateNull());
            cJSON_AddItemToArray(srow, cJSON_CreateBool(x >= 0 && slow(arg, a, b)));
        }
        cJSON_AddItemToArray(bw, row);
        cJSON_AddItemToArray(sl, srow);
    }
}

static int pair_slow(const void *arg, int a, int b)
{
    const pairs_t *p = arg;
    return p->confirmed[a] || p->confirmed[b] || p->link[a * p->nh + b];
}

static void report_pairs(pf_ctx_t *c, const pairs_t *p, dl_pf_pairs_t mode, double median)
{
    if (c->rank != 0)
        return;
    int nh = p->nh;
    cJSON *o = cJSON_AddObjectToObject(c->scopes, "pair");
    cJSON_AddStringToObject(o, "mode", mode == DL_PF_PAIRS_ALL ? "all" : "ring");
    cJSON_AddNumberToObject(o, "rounds", p->rounds);
    cJSON_AddNumberToObject(o, "median_host_gbps", median);
    pf_pair_matrix_json(c, p->pair, median, pair_slow, p, o);
    cJSON *pl = cJSON_AddArrayToObject(o, "pairs"), *hl = cJSON_AddArrayToObject(o, "hosts");
    for (int a = 0; a < nh; a++)
        for (int b = a + 1; b < nh; b++) {
            if (p->pair[a * nh + b] < 0)
                continue;
            cJSON *e = cJSON_CreateObject(), *hs = cJSON_AddArrayToObject(e, "hosts");
            cJSON_AddItemToArray(hs, cJSON_CreateString(c->lay.names[a]));
            cJSON_AddItemToArray(hs, cJSON_CreateString(c->lay.names[b]));
            cJSON_AddNumberToObject(e, "round", p->round_of[a * nh + b]);
            cJSON_AddNumberToObject(e, "busbw_gbps", p->pair[a * nh + b]);
            cJSON_AddItemToArray(pl, e);
        }
    for (int h = 0; h < nh; h++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "host", c->lay.names[h]);
        cJSON_AddNumberToObject(e, "best_busbw_gbps", p->best[h]);
        cJSON_AddBoolToObject(e, "suspect", p->low[h]);
        cJSON_AddBoolToObject(e, "confirmed", p->confirmed[h]);
        cJSON_AddItemToArray(hl, e);
        if (!p->low[h])
            pf_check(c, DL_PF_PASS, "bandwidth", "pair", c->lay.names[h], NULL,
                     "best pair busbw %.3f GB/s (median host %.3f)", p->best[h], median);
    }
}

dl_status_t pf_pairs(pf_ctx_t *c)
{
    pairs_t p = {.nh = c->lay.nhosts};
    int nh = p.nh;
    dl_pf_pairs_t mode = dl_pf_pairs_resolve(c->o->pairs, nh);
    p.rounds = dl_pf_pair_rounds(nh, mode, &p.partner);
    p.pair = malloc((size_t)nh * nh * sizeof(double));
    p.round_of = calloc((size_t)nh * nh, sizeof(int));
    p.best = malloc((size_t)nh * sizeof(double));
    p.low = calloc((size_t)nh, sizeof(int));
    p.confirmed = calloc((size_t)nh, sizeof(int));
    p.link = calloc((size_t)nh * nh, 1);
    dl_status_t st = p.partner && p.pair && p.round_of && p.best && p.low && p.confirmed && p.link
                         ? DL_OK : DL_ERR_NOMEM;
    for (int i = 0; st == DL_OK && i < nh * nh; i++)
        p.pair[i] = -1;
    if (st == DL_OK)
        st = run_rounds(c, &p);
    for (int h = 0; st == DL_OK && h < nh; h++) {
        p.best[h] = -1;
        for (int q = 0; q < nh; q++)
            if (p.pair[h * nh + q] > p.best[h])
                p.best[h] = p.pair[h * nh + q];
    }
    double median = 0;
    if (st == DL_OK) {
        dl_pf_low_outliers(p.best, nh, c->o->min_fraction, c->o->mad_k, p.low, &median);
        if (nh < 3)
            pf_check(c, DL_PF_SKIP, "localise", "pair", "-", NULL,
                     "%d hosts: a slow pair cannot be pinned on one of them (needs 3)", nh);
        st = retest(c, &p, median, c->suspects);
    }
    if (st == DL_OK)
        st = slow_links(c, &p);
    if (st == DL_OK)
        report_pairs(c, &p, mode, median);
    pairs_free(&p);
    return st;
}
