/* Slow rails: a rail (the same local rank on every host: one NIC plane)
 * slow in most screen groups is not a host's fault. */
#include "plan.h"

#include <math.h>
#include <stdlib.h>

int pf_plan_explained(const pf_plan_t *p, const int *hosts, int n)
{
    for (int i = 0; i < n; i++)
        if (p->state[hosts[i]] == PF_H_NAMED)
            return 1;
    for (int f = 0; f < p->nfinds; f++) {
        const pf_finding_t *x = &p->finds[f];
        if (!x->named || x->kind != PF_FIND_LINK)
            continue;
        for (int i = 0; i < n; i++) {
            int a = hosts[i], b = hosts[(i + 1) % n];
            if ((a == x->a && b == x->b) || (a == x->b && b == x->a))
                return 1;
        }
    }
    return 0;
}

/* The screen's slow share of each rail; suspects[] those slow in more than
 * half of at least 3 groups. Returns how many. */
static int rail_suspects(const pf_plan_t *p, const pf_round_t *r, int *suspect)
{
    int nr = p->pr->nrails, groups = r->nprobes / nr, k = 0;
    int *slow = calloc((size_t)nr, sizeof(int)), *sorted = calloc((size_t)nr, sizeof(int));
    for (int rail = 0; slow && sorted && rail < nr; rail++) {
        for (int q = rail; q < r->nprobes; q += nr)
            slow[rail] += r->out[q].call == PF_SLOW;
        int i = rail; /* insertion: the rails' slow counts in order */
        for (; i > 0 && sorted[i - 1] > slow[rail]; i--)
            sorted[i] = sorted[i - 1];
        sorted[i] = slow[rail];
    }
    /* Slow groups a host explains are slow on every rail: a rail's own
     * are those beyond the median rail's. */
    for (int rail = 0; slow && sorted && rail < nr; rail++) {
        suspect[rail] = groups >= 3 && 2 * (slow[rail] - sorted[nr / 2]) > groups &&
                        !p->rail_named[rail];
        k += suspect[rail];
    }
    free(slow);
    free(sorted);
    return k;
}

/* The confirming round: the suspect rails and one rail not suspected (the
 * controls: the reference) in the next order's groups. */
static dl_status_t rail_confirm(pf_plan_t *p, const int *suspect, const int *perm, pf_round_t *r)
{
    int n = p->n, g = p->cfg.group, nr = p->pr->nrails, ctl = -1;
    for (int rail = 0; rail < nr && ctl < 0; rail++)
        if (!suspect[rail] && !p->rail_named[rail])
            ctl = rail;
    double theta;
    dl_status_t st = pf_round_init(r, "rail confirm", pf_plan_size(p, g, p->cfg.bytes, &theta));
    r->theta = theta;
    for (int s = 0; st == DL_OK && s + 2 <= n; s += g) {
        int k = n - s < g ? n - s : g;
        for (int rail = 0; rail < nr; rail++)
            if ((suspect[rail] || rail == ctl) &&
                pf_round_add(r, perm + s, k, rail, rail == ctl) < 0)
                st = DL_ERR_NOMEM;
    }
    return st == DL_OK ? pf_plan_round(p, r) : st;
}

static dl_status_t rail_judge(pf_plan_t *p, const pf_round_t *r, int rail)
{
    int slow = 0, all = 0, mid = -1;
    for (int q = 0; q < r->nprobes; q++) {
        if (r->rail[q] != rail)
            continue;
        all++;
        slow += r->out[q].call == PF_SLOW;
        if (mid < 0 || r->out[q].excess < r->out[mid].excess)
            mid = q; /* the least slow: the weakest evidence */
    }
    if (!all)
        return DL_OK;
    pf_finding_t f = {.kind = PF_FIND_RAIL, .a = rail, .named = 2 * slow > all,
                      .slowdown = exp(r->out[mid].excess), .bytes = r->bytes,
                      .iters = r->out[mid].iters};
    f.confidence = (double)slow / all;
    p->rail_named[rail] = f.named;
    /* Probes on a slow rail (all rails included) would mask the rest: from
     * now on they run on one that is not named. */
    for (int x = 0; f.named && (p->probe_rail < 0 || p->probe_rail == rail) &&
                    x < p->pr->nrails; x++)
        if (!p->rail_named[x])
            p->probe_rail = x;
    return pf_plan_find(p, &f);
}

dl_status_t pf_plan_rails(pf_plan_t *p, const pf_round_t *screen, const int *next_perm)
{
    int nr = p->pr->nrails;
    if (nr < 2)
        return DL_OK;
    int *suspect = calloc((size_t)nr, sizeof(int));
    if (!suspect)
        return DL_ERR_NOMEM;
    dl_status_t st = DL_OK;
    if (rail_suspects(p, screen, suspect)) {
        pf_round_t r;
        st = rail_confirm(p, suspect, next_perm, &r);
        for (int rail = 0; st == DL_OK && rail < nr; rail++)
            if (suspect[rail])
                st = rail_judge(p, &r, rail);
        pf_round_free(&r);
    }
    free(suspect);
    return st;
}
