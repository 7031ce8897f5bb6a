/* The planner's screen and its bookkeeping (plan.h); bisect.c halves what
 * the screen found slow. */
#include "plan.h"
#include "preflight.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PF_PLAN_TRIES 3     /* sizes a probe that does not decide is tried at */
#define PF_PLAN_SENS 0.9    /* the share of a call's time that must be bandwidth */
#define PF_PLAN_MAX_BYTES (4ull << 30)

/* The size at which a probe of nhosts separates the target fault: a call
 * mostly latency hides a slower link, so the size grows until bandwidth is
 * PF_PLAN_SENS of the time; theta is then half the target's effect (log). */
uint64_t pf_plan_size(const pf_plan_t *p, int nhosts, uint64_t bytes, double *theta)
{
    double lat = p->pr->call_s(p->pr->ctx, nhosts, 8), t = p->pr->call_s(p->pr->ctx, nhosts, bytes);
    while (t > 0 && 1 - lat / t < PF_PLAN_SENS && bytes < PF_PLAN_MAX_BYTES) {
        bytes *= 4;
        t = p->pr->call_s(p->pr->ctx, nhosts, bytes);
    }
    double sens = t > 0 ? 1 - lat / t : 1;
    *theta = 0.5 * log(1 + p->cfg.target * sens);
    return bytes;
}

dl_status_t pf_plan_round(pf_plan_t *p, pf_round_t *r)
{
    for (int i = 0; i < r->nprobes; i++)
        r->nominal[i] = p->pr->call_s(p->pr->ctx, r->start[i + 1] - r->start[i], r->bytes);
    dl_status_t st = p->pr->run(p->pr->ctx, r, &p->cfg.judge);
    if (st != DL_OK)
        return st;
    if (DL_GROW(p->log, (size_t)p->rounds, p->log_cap, 32) != DL_OK)
        return DL_ERR_NOMEM;
    p->log[p->rounds++] = (pf_round_log_t){r->stage, r->nprobes, r->max_iters, r->bytes, r->wall_s};
    p->probes += r->nprobes;
    p->wall_s += r->wall_s;
    return DL_OK;
}

/* Whether pool[i..i+n) are free cleared hosts of one fine screen probe:
 * neighbours there, so the links between them were measured fine too. */
static int window_free(const pf_plan_t *p, int i, int n, const unsigned char *busy)
{
    if (i + n > p->npool)
        return 0;
    for (int k = i; k < i + n; k++)
        if (busy[p->pool[k]] || p->state[p->pool[k]] != PF_H_CLEARED ||
            p->run_of[k] != p->run_of[i])
            return 0;
    return 1;
}

/* n cleared hosts not busy into dst: a run of neighbours from one fine
 * screen probe when there is one (from where the last fill ended, so
 * fillers change), else any; returns how many there were. */
int pf_plan_fill(pf_plan_t *p, int *dst, int n, unsigned char *busy)
{
    int k = 0;
    for (int t = 0; t < p->npool; t++) {
        int i = (p->next + t) % p->npool;
        if (window_free(p, i, n, busy)) {
            for (; k < n; k++)
                busy[dst[k] = p->pool[i + k]] = 1;
            p->next = i + n;
            return k;
        }
    }
    for (int t = 0; k < n && t < p->npool; t++) {
        int h = p->pool[(p->next + t) % p->npool];
        if (!busy[h] && p->state[h] == PF_H_CLEARED)
            busy[dst[k++] = h] = 1;
    }
    return k;
}

/* Control probes of cleared hosts, taken before the fillers but leaving
 * them half of the cleared hosts; none: the last screen's reference. */
void pf_plan_add_controls(pf_plan_t *p, pf_round_t *r, unsigned char *busy)
{
    int g = p->cfg.group, cleared = 0;
    for (int i = 0; i < p->npool; i++)
        cleared += p->state[p->pool[i]] == PF_H_CLEARED && !busy[p->pool[i]];
    cleared = cleared > p->reserve ? cleared - p->reserve : 0;
    int n = cleared / 2 < g ? cleared / 2 : g, *h = malloc((size_t)g * sizeof(int));
    for (int c = 0; h && n >= 2 && c < p->cfg.controls && (c + 1) * n <= cleared / 2; c++) {
        int k = pf_plan_fill(p, h, n, busy);
        if (k >= 2)
            pf_round_add(r, h, k, p->probe_rail, 1);
    }
    free(h);
    r->fixed_ref = 1;
    r->ref = p->screen_ref;
    r->ref_se = 0;
}

dl_status_t pf_plan_find(pf_plan_t *p, const pf_finding_t *found)
{
    pf_finding_t one = *found, *f = &one;
    if (f->kind == PF_FIND_LINK && f->b >= 0 && f->b < f->a) /* a link: lower host first */
        f->a = found->b, f->b = found->a;
    for (int i = 0; i < p->nfinds; i++) { /* found again from another order: once */
        pf_finding_t *x = &p->finds[i];
        if (x->kind != f->kind || x->a != f->a || x->b != f->b)
            continue;
        if (f->named && !x->named) /* a warning, then named: named */
            *x = *f;
        return DL_OK;
    }
    if (DL_GROW(p->finds, (size_t)p->nfinds, p->finds_cap, 8) != DL_OK)
        return DL_ERR_NOMEM;
    p->finds[p->nfinds++] = *f;
    return DL_OK;
}

/* The screen's host orders: host order, then shifted by G/4 (the pairs at
 * the first order's group boundaries and first halvings become neighbours
 * inside a group); or every pair of
 * a tournament (G = 2). Returns how many, perms[o * n + i]. */
static int orderings(const pf_plan_t *p, int **perms)
{
    int n = p->n, g = p->cfg.group, *partner = NULL;
    int k = p->cfg.all_pairs ? dl_pf_pair_rounds(n, DL_PF_PAIRS_ALL, &partner)
                             : (p->cfg.orderings > 1 && n > g ? 2 : 1);
    *perms = malloc((size_t)k * n * sizeof(int));
    for (int o = 0; *perms && o < k; o++) {
        int *pm = *perms + (size_t)o * n, m = 0;
        for (int h = 0; h < n; h++) {
            if (!p->cfg.all_pairs)
                pm[m++] = (h + o * (g / 4 > 0 ? g / 4 : 1)) % n;
            else if (partner[o * n + h] > h) /* each pair once, byes last */
                pm[m++] = h, pm[m++] = partner[o * n + h];
        }
        for (int h = 0; h < n && p->cfg.all_pairs; h++)
            if (partner[o * n + h] < 0)
                pm[m++] = h;
    }
    free(partner);
    return *perms ? k : -1;
}

/* A screen of one order: every group of G on every rail (all rails at once
 * when there is one); a group is kept (as a ring, in order) when a probe of
 * it was slow on a rail not named, or never decided. */
static dl_status_t screen(pf_plan_t *p, const int *perm, pf_round_t *r)
{
    int n = p->n, g = p->cfg.group, nr = p->pr->nrails;
    double theta;
    dl_status_t st = pf_round_init(r, "screen", pf_plan_size(p, g, p->cfg.bytes, &theta));
    r->theta = theta;
    for (int s = 0; st == DL_OK && s < n; s += g) {
        int k = n - s < g ? n - s : g;
        if (k < 2) /* one host left over: into the last group's next order */
            continue;
        for (int rail = 0; rail < nr; rail++)
            if (pf_round_add(r, perm + s, k, nr > 1 ? rail : -1, 0) < 0)
                st = DL_ERR_NOMEM;
    }
    return st == DL_OK ? pf_plan_round(p, r) : st;
}

/* After a screen: hosts of groups all fine are cleared; slow groups (on a
 * rail not named) are the sets to bisect, unless a named host is in them
 * or a named link between neighbours (what is named explains them). */
static dl_status_t sift(pf_plan_t *p, const pf_round_t *r, int *nsets, int *start, int *hosts,
                        unsigned char *undecided_set)
{
    int nr = p->pr->nrails, per = nr;
    *nsets = 0;
    start[0] = 0;
    for (int q = 0; q < r->nprobes; q += per) {
        const int *h = r->hosts + r->start[q];
        int k = r->start[q + 1] - r->start[q], slow = 0, undecided = 0;
        for (int x = 0; x < per; x++) {
            int rail = r->rail[q + x] < 0 ? 0 : r->rail[q + x];
            slow |= r->out[q + x].call == PF_SLOW && !p->rail_named[rail];
            undecided |= r->out[q + x].call == PF_UNDECIDED;
        }
        for (int i = 0; i < k && !slow && !undecided; i++)
            if (p->state[h[i]] == PF_H_UNKNOWN) {
                p->state[h[i]] = PF_H_CLEARED;
                p->run_of[p->npool] = p->runs;
                p->pool[p->npool++] = h[i];
            }
        p->runs++;
        if (slow || undecided) {
            memcpy(hosts + start[*nsets], h, (size_t)k * sizeof(int));
            start[*nsets + 1] = start[*nsets] + k;
            undecided_set[*nsets] = !slow;
            (*nsets)++;
        }
    }
    return DL_OK;
}

static dl_status_t plan_init(const pf_prober_t *pr, const pf_plan_cfg_t *cfg, pf_plan_t *p)
{
    memset(p, 0, sizeof(*p));
    p->pr = pr;
    p->cfg = *cfg;
    p->n = pr->nhosts;
    p->state = calloc((size_t)p->n, 1);
    p->pool = malloc((size_t)p->n * sizeof(int));
    p->run_of = malloc((size_t)p->n * sizeof(int));
    p->rail_named = calloc((size_t)pr->nrails, sizeof(int));
    p->probe_rail = -1;
    return p->state && p->pool && p->run_of && p->rail_named ? DL_OK : DL_ERR_NOMEM;
}

dl_status_t pf_plan_run(const pf_prober_t *pr, const pf_plan_cfg_t *cfg, pf_plan_t *p)
{
    int *perms = NULL, *start = NULL, *hosts = NULL;
    unsigned char *undecided = NULL;
    dl_status_t st = plan_init(pr, cfg, p);
    int k = st == DL_OK ? orderings(p, &perms) : -1;
    start = malloc((size_t)(p->n + 1) * sizeof(int));
    hosts = malloc((size_t)p->n * sizeof(int));
    undecided = malloc((size_t)p->n + 1);
    if (k < 0 || !start || !hosts || !undecided)
        st = DL_ERR_NOMEM;
    for (int o = 0; st == DL_OK && o < k; o++) {
        pf_round_t r;
        int nsets = 0;
        st = screen(p, perms + (size_t)o * p->n, &r);
        p->screen_ref = r.ref;
        if (st == DL_OK)
            st = pf_plan_rails(p, &r, perms + (size_t)((o + 1) % k) * p->n);
        if (st == DL_OK)
            st = sift(p, &r, &nsets, start, hosts, undecided);
        pf_round_free(&r);
        if (st == DL_OK && nsets)
            st = pf_bisect(p, nsets, start, hosts, undecided);
    }
    free(perms);
    free(start);
    free(hosts);
    free(undecided);
    return st;
}

void pf_plan_free(pf_plan_t *p)
{
    free(p->state);
    free(p->pool);
    free(p->run_of);
    free(p->finds);
    free(p->log);
    free(p->rail_named);
    memset(p, 0, sizeof(*p));
}
