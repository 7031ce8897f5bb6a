/* A modelled fleet: the planner's prober for N nodes no rank stands behind.
 * A probe's healthy call time is the modelling backend's (expect: its
 * system description); faults slow the bandwidth part of it (a slow node,
 * a slow link between two neighbours of a probe's ring, a slow rail, a node
 * slow in a share of the iterations), and each timed iteration carries
 * lognormal noise of the given size. */
#include "fleet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"node", "link", "rail", "flap"};

/* "node:H:F", "link:A:B:F", "rail:R:F", "flap:H:F[:P]". */
static dl_status_t parse_one(char *s, int nhosts, int nrails, pf_fault_t *f)
{
    char *save = NULL, *tok[5];
    int n = 0;
    for (char *t = strtok_r(s, ":", &save); t && n < 5; t = strtok_r(NULL, ":", &save))
        tok[n++] = t;
    int k = -1;
    for (int i = 0; n && i < 4; i++)
        if (!strcmp(tok[0], kind_names[i]))
            k = i;
    int want = k == PF_FAULT_LINK ? 4 : 3;
    if (k < 0 || (n != want && !(k == PF_FAULT_FLAP && n == 4)))
        return DL_ERR_USAGE;
    char *end;
    f->kind = (pf_fault_kind_t)k;
    f->a = (int)strtol(tok[1], &end, 10);
    f->b = k == PF_FAULT_LINK ? (int)strtol(tok[2], &end, 10) : -1;
    f->factor = strtod(tok[want - 1], &end);
    f->p = k == PF_FAULT_FLAP ? (n == 4 ? strtod(tok[3], &end) : 0.5) : 1;
    int lim = k == PF_FAULT_RAIL ? nrails : nhosts;
    if (*end || f->a < 0 || f->a >= lim || (k == PF_FAULT_LINK && (f->b < 0 || f->b >= nhosts ||
        f->b == f->a)) || !(f->factor >= 1) || !(f->p > 0 && f->p <= 1))
        return DL_ERR_USAGE;
    return DL_OK;
}

dl_status_t pf_faults_parse(const char *list, int nhosts, int nrails, pf_fault_t *out, int *n)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", list ? list : "");
    char *save = NULL;
    *n = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char one[256];
        snprintf(one, sizeof(one), "%s", t);
        if (*n == PF_FLEET_MAX_FAULTS || parse_one(one, nhosts, nrails, &out[*n]) != DL_OK) {
            dl_err("--fault: '%s' is not node:HOST:FACTOR, link:HOST:HOST:FACTOR, rail:RAIL:FACTOR "
                   "or flap:HOST:FACTOR[:SHARE] (hosts 0-%d, rails 0-%d, FACTOR >= 1, at most %d "
                   "faults)", t, nhosts - 1, nrails - 1, PF_FLEET_MAX_FAULTS);
            return DL_ERR_USAGE;
        }
        (*n)++;
    }
    return DL_OK;
}

const char *pf_fault_kind_str(pf_fault_kind_t k)
{
    return (unsigned)k < 4 ? kind_names[k] : "?";
}

/* A healthy call of a probe of n nodes: the model's, remembered. */
static double call_s(void *ctx, int n, uint64_t bytes)
{
    pf_fleet_t *m = ctx;
    for (int i = 0; i < m->ncache; i++)
        if (m->cache[i].n == n && m->cache[i].bytes == bytes)
            return m->cache[i].t;
    dl_expect_t e = {0};
    if (m->be->expect(m->opts, DL_COLL_ALLREDUCE, bytes, n, &e) != DL_OK || e.time_s <= 0)
        e.time_s = 1e-3; /* never: the command checked the model answers */
    int i = m->ncache < PF_FLEET_CACHE ? m->ncache++ : (int)(bytes % PF_FLEET_CACHE);
    m->cache[i].n = n;
    m->cache[i].bytes = bytes;
    m->cache[i].t = e.time_s;
    return e.time_s;
}

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
    return ((double)(next_u64(s) >> 11) + 0.5) / (double)(1ull << 53);
}

static double normal(uint64_t *s)
{
    return sqrt(-2 * log(uniform(s))) * cos(6.283185307179586 * uniform(s));
}

/* Whether a fault touches probe q: a node or flapper in it, a link whose
 * hosts are neighbours in its ring, a rail it runs on (several hosts). */
static int touches(const pf_fleet_t *m, const pf_round_t *r, int q, const pf_fault_t *f)
{
    int n = r->start[q + 1] - r->start[q];
    if (f->kind == PF_FAULT_RAIL)
        return n > 1 && (r->rail[q] < 0 || r->rail[q] == f->a);
    if (m->probe_of[f->a] != q)
        return 0;
    if (f->kind != PF_FAULT_LINK)
        return 1;
    if (m->probe_of[f->b] != q || n < 2)
        return 0;
    int d = abs(m->pos_of[f->a] - m->pos_of[f->b]);
    return d == 1 || d == n - 1;
}

/* Per round: each probe's healthy parts and its lasting slowdown. */
static dl_status_t prepare(pf_fleet_t *m, const pf_round_t *r)
{
    free(m->lat), free(m->bw), free(m->slow), free(m->flaps);
    m->lat = malloc((size_t)r->nprobes * sizeof(double));
    m->bw = malloc((size_t)r->nprobes * sizeof(double));
    m->slow = malloc((size_t)r->nprobes * sizeof(double));
    m->flaps = calloc((size_t)r->nprobes, sizeof(unsigned));
    if (!m->lat || !m->bw || !m->slow || !m->flaps)
        return DL_ERR_NOMEM;
    for (int q = 0; q < r->nprobes; q++)
        for (int i = r->start[q]; i < r->start[q + 1]; i++)
            m->probe_of[r->hosts[i]] = q, m->pos_of[r->hosts[i]] = i - r->start[q];
    for (int q = 0; q < r->nprobes; q++) {
        int n = r->start[q + 1] - r->start[q];
        m->lat[q] = call_s(m, n, 8);
        m->bw[q] = call_s(m, n, r->bytes) - m->lat[q];
        m->slow[q] = 1;
        for (int f = 0; f < m->nfaults; f++) {
            const pf_fault_t *x = &m->faults[f];
            if (!touches(m, r, q, x))
                continue;
            if (x->kind == PF_FAULT_FLAP)
                m->flaps[q] |= 1u << f;
            else if (x->factor > m->slow[q])
                m->slow[q] = x->factor;
        }
    }
    for (int i = 0; i < r->nhosts_used; i++)
        m->probe_of[r->hosts[i]] = -1;
    return DL_OK;
}

static double sample(void *ctx, const pf_round_t *r, int q)
{
    pf_fleet_t *m = ctx;
    double slow = m->slow[q];
    for (int f = 0; m->flaps[q] && f < m->nfaults; f++)
        if ((m->flaps[q] >> f & 1) && uniform(&m->rng) < m->faults[f].p && m->faults[f].factor > slow)
            slow = m->faults[f].factor;
    double t = m->lat[q] + m->bw[q] * slow;
    return m->noise > 0 ? t * exp(m->noise * normal(&m->rng)) : t;
}

static dl_status_t run(void *ctx, pf_round_t *r, const pf_judge_cfg_t *j)
{
    pf_fleet_t *m = ctx;
    dl_status_t st = prepare(m, r);
    return st == DL_OK ? pf_judge_round(r, j, sample, m, m->pr.setup_s) : st;
}

dl_status_t pf_fleet_open(pf_fleet_t *m, const dl_backend_ops_t *be, const void *opts, int nhosts,
                          int nrails, double noise, uint64_t seed)
{
    memset(m, 0, sizeof(*m));
    m->be = be;
    m->opts = opts;
    m->noise = noise;
    m->rng = seed;
    m->probe_of = malloc((size_t)nhosts * sizeof(int));
    m->pos_of = malloc((size_t)nhosts * sizeof(int));
    if (!m->probe_of || !m->pos_of)
        return DL_ERR_NOMEM;
    for (int h = 0; h < nhosts; h++)
        m->probe_of[h] = -1;
    m->pr = (pf_prober_t){.ctx = m, .run = run, .call_s = call_s, .nhosts = nhosts,
                          .nrails = nrails, .setup_s = PF_FLEET_SETUP_S};
    return DL_OK;
}

void pf_fleet_close(pf_fleet_t *m)
{
    free(m->probe_of), free(m->pos_of);
    free(m->lat), free(m->bw), free(m->slow), free(m->flaps);
}
