/* Bisect and confirm (plan.h): a queue of things to measure, each round
 * taking every item whose hosts are free, all at once beside the control
 * probes. A set is halved (each half filled up to G with cleared hosts);
 * a link is its two hosts as neighbours; a suspect is measured again with
 * other fillers and named only when it is slow again. */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PF_TRIES 3 /* sizes an undecided probe is tried at (x4 each) */

/* A set to halve; a link to probe (its hosts as neighbours); a link's
 * hosts apart (each with fillers: both fine says the slowness is their
 * link's, one slow says it is that host's); a suspect to confirm. */
/* A set measured whole again (what was named taken out of it: slow, it is
 * bisected). */
typedef enum { IT_SET, IT_LINK, IT_APART, IT_WHOLE, IT_CONFIRM_HOST, IT_CONFIRM_LINK } it_kind_t;

typedef struct {
    it_kind_t kind;
    int *hosts, n;      /* IT_SET: the ring; else hosts[0..1] */
    int tries;
    double conf, excess; /* the evidence that made it a suspect (1e9: none yet) */
} item_t;

typedef struct {
    item_t *it;
    int n;
    size_t cap;
} queue_t;

static dl_status_t push(queue_t *q, it_kind_t kind, const int *hosts, int n, int tries)
{
    if (DL_GROW(q->it, (size_t)q->n, q->cap, 16) != DL_OK)
        return DL_ERR_NOMEM;
    item_t *e = &q->it[q->n];
    *e = (item_t){.kind = kind, .n = n, .tries = tries, .conf = 1, .excess = 1e9};
    e->hosts = malloc((size_t)n * sizeof(int));
    if (!e->hosts)
        return DL_ERR_NOMEM;
    memcpy(e->hosts, hosts, (size_t)n * sizeof(int));
    q->n++;
    return DL_OK;
}

/* A probe of these hosts filled up to G with cleared ones. */
static int add_filled(pf_plan_t *p, pf_round_t *r, const int *h, int n, unsigned char *busy)
{
    int g = p->cfg.group > n ? p->cfg.group : n, *all = malloc((size_t)g * sizeof(int));
    if (!all)
        return -1;
    memcpy(all, h, (size_t)n * sizeof(int));
    int k = n + pf_plan_fill(p, all + n, g - n, busy);
    int q = pf_round_add(r, all, k, p->probe_rail, 0);
    free(all);
    return q;
}

static int free_hosts(const item_t *e, const unsigned char *busy)
{
    for (int i = 0; i < e->n; i++)
        if (busy[e->hosts[i]])
            return 0;
    return 1;
}

/* The fillers an item's probes need to span min_hosts hosts each. */
static int fill_need(const pf_plan_t *p, const item_t *e)
{
    int m = p->pr->min_hosts, two = e->kind == IT_SET || e->kind == IT_APART;
    int h = two ? e->n / 2 : e->n, need = m > h ? m - h : 0;
    return need + (two && m > e->n - h ? m - (e->n - h) : 0);
}

static int cleared_free(const pf_plan_t *p, const unsigned char *busy)
{
    int k = 0;
    for (int i = 0; i < p->npool; i++)
        k += p->state[p->pool[i]] == PF_H_CLEARED && !busy[p->pool[i]];
    return k;
}

/* The items this round takes (their hosts busy, taken[i] 0; -1: waits):
 * those whose hosts are free and whose fillers are there (p->reserve, kept
 * from the controls); the first free one at least, so the queue moves. */
static void take(pf_plan_t *p, const queue_t *q, int *taken, unsigned char *busy)
{
    int took = 0;
    p->reserve = 0;
    for (int pass = 0; pass < 2 && !took; pass++)
        for (int i = 0; i < q->n && (!pass || !took); i++) {
            const item_t *e = &q->it[i];
            int need = fill_need(p, e);
            taken[i] = free_hosts(e, busy) &&
                       (pass || !need || need <= cleared_free(p, busy) - p->reserve) ? 0 : -1;
            for (int k = 0; !taken[i] && k < e->n; k++)
                busy[e->hosts[k]] = 1;
            p->reserve += taken[i] ? 0 : need;
            took += !taken[i];
        }
}

/* The round's probes: for each item taken, its first probe (a set: two,
 * the halves); taken[i] = its first probe, -1 when it waits. */
static dl_status_t build(pf_plan_t *p, queue_t *q, pf_round_t *r, int *taken, unsigned char *busy)
{
    int tries = 0, bisecting = 0;
    for (int i = 0; i < q->n; i++)
        tries = q->it[i].tries > tries ? q->it[i].tries : tries;
    double theta;
    uint64_t b = pf_plan_size(p, p->cfg.group, p->cfg.bytes, &theta);
    for (int t = 0; !p->cfg.same_size && t < tries && b < (4ull << 30); t++)
        b *= 4;
    dl_status_t st = pf_round_init(r, "bisect", b);
    r->theta = theta;
    take(p, q, taken, busy);
    pf_plan_add_controls(p, r, busy);
    p->reserve = 0;
    for (int i = 0; st == DL_OK && i < q->n; i++) {
        item_t *e = &q->it[i];
        if (taken[i] < 0)
            continue;
        int two = e->kind == IT_SET || e->kind == IT_APART, h = two ? e->n / 2 : e->n;
        taken[i] = add_filled(p, r, e->hosts, h, busy);
        if (two && taken[i] >= 0 && add_filled(p, r, e->hosts + h, e->n - h, busy) < 0)
            taken[i] = -1;
        if (taken[i] < 0)
            st = DL_ERR_NOMEM;
        bisecting |= e->kind < IT_CONFIRM_HOST;
    }
    r->stage = bisecting ? "bisect" : "confirm";
    return st;
}

/* The controls' spread: a probe's beside it says whether it flaps. */
static double control_sd(const pf_round_t *r)
{
    double sd = 0;
    int k = 0;
    for (int q = 0; q < r->nprobes; q++)
        if (r->control[q])
            sd += r->out[q].sd, k++;
    return k ? sd / k : 0;
}

static dl_status_t name(pf_plan_t *p, const item_t *e, const pf_round_t *r, int q)
{
    double conf = pf_judge_confidence(r, q), sd = control_sd(r);
    pf_finding_t f = {.kind = e->kind == IT_CONFIRM_HOST ? PF_FIND_HOST : PF_FIND_LINK,
                      .a = e->hosts[0], .b = e->n > 1 ? e->hosts[1] : -1,
                      .bytes = r->bytes, .iters = r->out[q].iters};
    f.named = r->out[q].call == PF_SLOW;
    f.inconclusive = r->out[q].call == PF_UNDECIDED;
    f.confidence = conf < e->conf ? conf : e->conf;
    f.slowdown = exp(r->out[q].excess < e->excess ? r->out[q].excess : e->excess);
    f.spread = r->out[q].sd;
    f.flapping = f.named && r->out[q].sd > 2 * sd + (p->cfg.flap_margin > 0 ? p->cfg.flap_margin : 0.05);
    if (f.kind == PF_FIND_HOST && f.named)
        p->state[f.a] = PF_H_NAMED;
    return pf_plan_find(p, &f);
}

/* A finding for hosts h (one host, or a link) from probe q. */
static dl_status_t report(pf_plan_t *p, const item_t *e, const pf_round_t *r, int q,
                          const int *h, int n)
{
    item_t x = *e;
    x.hosts = (int *)h;
    x.n = n;
    int hosts = e->kind == IT_SET || e->kind == IT_WHOLE || e->kind == IT_CONFIRM_HOST;
    x.kind = hosts ? IT_CONFIRM_HOST : IT_CONFIRM_LINK;
    dl_status_t st = DL_OK;
    for (int i = 0; st == DL_OK && hosts && n > 1 && i < n; i++) /* an undecided set: each host */
        st = report(p, e, r, q, h + i, 1);
    return hosts && n > 1 ? st : name(p, &x, r, q);
}

/* What probe q of item e (of hosts h) asks next. A slow set half goes on
 * (one host: to be confirmed), a slow link or suspect is confirmed or
 * named; an undecided probe is tried again larger, up to PF_TRIES, then
 * reported inconclusive; a fine suspect is reported as not confirmed. */
static dl_status_t outcome(pf_plan_t *p, queue_t *q, const item_t *e, const pf_round_t *r,
                           int pq, const int *h, int n)
{
    pf_call_t c = r->out[pq].call;
    int confirm = e->kind >= IT_CONFIRM_HOST;
    if (c == PF_UNDECIDED && e->tries + 1 >= PF_TRIES)
        return report(p, e, r, pq, h, n);
    if (confirm && c != PF_UNDECIDED)
        return report(p, e, r, pq, h, n);
    if (c == PF_FINE)
        return DL_OK;
    it_kind_t k = confirm ? e->kind : n == 1 ? IT_CONFIRM_HOST
                                  : e->kind == IT_LINK ? IT_APART : IT_SET;
    if (c == PF_SLOW && e->kind == IT_WHOLE && n > 1)
        k = IT_SET;
    if (c == PF_UNDECIDED && !confirm)
        k = n == 1 ? IT_CONFIRM_HOST : e->kind; /* the same again, larger */
    dl_status_t st = push(q, k, h, n, c == PF_UNDECIDED ? e->tries + 1 : 0);
    if (st != DL_OK)
        return st;
    item_t *x = &q->it[q->n - 1];
    x->conf = c == PF_SLOW ? pf_judge_confidence(r, pq) : e->conf;
    x->excess = c == PF_SLOW ? r->out[pq].excess : confirm ? e->excess : 1e9;
    if (n == 1)
        p->state[h[0]] = PF_H_SUSPECT;
    return DL_OK;
}

/* A set's halves: a slow half goes on; neither slow: the fault is a link
 * across the boundary (the two pairs that were neighbours in the ring),
 * probed even when a half did not decide (it is tried again larger too):
 * waiting for it would lose the link, should it then read fine. */
static dl_status_t after_set(pf_plan_t *p, queue_t *q, const item_t *e, const pf_round_t *r, int pq)
{
    int h = e->n / 2;
    dl_status_t st = outcome(p, q, e, r, pq, e->hosts, h);
    if (st == DL_OK)
        st = outcome(p, q, e, r, pq + 1, e->hosts + h, e->n - h);
    if (st != DL_OK || r->out[pq].call == PF_SLOW || r->out[pq + 1].call == PF_SLOW)
        return st;
    int l1[2] = {e->hosts[h - 1], e->hosts[h]}, l2[2] = {e->hosts[e->n - 1], e->hosts[0]};
    st = push(q, IT_LINK, l1, 2, 0);
    if (st == DL_OK && e->n > 2)
        st = push(q, IT_LINK, l2, 2, 0);
    return st;
}

/* A link's hosts apart: both fine, the link is confirmed next with other
 * fillers; a slow one is a host suspect; undecided, tried again larger. */
static dl_status_t after_apart(pf_plan_t *p, queue_t *q, const item_t *e, const pf_round_t *r,
                               int pq)
{
    pf_call_t a = r->out[pq].call, b = r->out[pq + 1].call;
    dl_status_t st = DL_OK;
    if (a == PF_FINE && b == PF_FINE)
        st = push(q, IT_CONFIRM_LINK, e->hosts, 2, 0);
    else if (a == PF_UNDECIDED || b == PF_UNDECIDED)
        return e->tries + 1 < PF_TRIES ? push(q, IT_APART, e->hosts, 2, e->tries + 1)
                                       : report(p, e, r, a == PF_UNDECIDED ? pq : pq + 1, e->hosts, 2);
    if (st == DL_OK && (a == PF_FINE) != (b == PF_FINE)) {
        int s = a == PF_SLOW ? 0 : 1;
        st = push(q, IT_CONFIRM_HOST, e->hosts + s, 1, 0);
        if (st == DL_OK) {
            q->it[q->n - 1].conf = pf_judge_confidence(r, pq + s);
            q->it[q->n - 1].excess = r->out[pq + s].excess;
            p->state[e->hosts[s]] = PF_H_SUSPECT;
        }
        return st;
    }
    if (st == DL_OK && a == PF_FINE && b == PF_FINE)
        q->it[q->n - 1].conf = e->conf, q->it[q->n - 1].excess = e->excess;
    return st;
}

static dl_status_t settle(pf_plan_t *p, queue_t *q, queue_t *next, const pf_round_t *r,
                          const int *taken)
{
    dl_status_t st = DL_OK;
    for (int i = 0; st == DL_OK && i < q->n; i++) {
        item_t *e = &q->it[i];
        if (taken[i] < 0)
            st = push(next, e->kind, e->hosts, e->n, e->tries);
        else if (e->kind == IT_SET)
            st = after_set(p, next, e, r, taken[i]);
        else if (e->kind == IT_APART)
            st = after_apart(p, next, e, r, taken[i]);
        else
            st = outcome(p, next, e, r, taken[i], e->hosts, e->n);
        if (st == DL_OK && next->n && taken[i] < 0)
            next->it[next->n - 1].conf = e->conf, next->it[next->n - 1].excess = e->excess;
    }
    return st;
}

static void queue_free(queue_t *q)
{
    for (int i = 0; i < q->n; i++)
        free(q->it[i].hosts);
    q->n = 0;
}

/* A slow set with a named host, or a named link between neighbours, is
 * measured again with those taken out (a host: left out, the fillers make
 * up the size; a link: its second host moved half the ring away). */
static dl_status_t push_set(pf_plan_t *p, queue_t *q, const int *h, int n, int undecided)
{
    if (undecided && n > 1) /* measured whole again, larger, before it is halved */
        return push(q, IT_WHOLE, h, n, 1);
    if (!pf_plan_explained(p, h, n))
        return push(q, n == 1 ? IT_CONFIRM_HOST : IT_SET, h, n, 0);
    int *x = malloc((size_t)n * sizeof(int)), k = 0;
    if (!x)
        return DL_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        if (p->state[h[i]] != PF_H_NAMED)
            x[k++] = h[i];
    for (int i = 0; k >= 4 && i < k; i++) {
        int pair[2] = {x[i], x[(i + 1) % k]}, j = (i + 1 + k / 2) % k;
        if (pf_plan_explained(p, pair, 2)) { /* the pair as a ring of two */
            x[(i + 1) % k] = x[j];
            x[j] = pair[1];
        }
    }
    dl_status_t st = k > 1 ? push(q, IT_WHOLE, x, k, 0) : DL_OK;
    free(x);
    return st;
}

dl_status_t pf_bisect(pf_plan_t *p, int nsets, const int *start, const int *hosts,
                      const unsigned char *undecided)
{
    queue_t a = {0}, b = {0}, *q = &a, *next = &b;
    dl_status_t st = DL_OK;
    for (int s = 0; st == DL_OK && s < nsets; s++)
        st = push_set(p, q, hosts + start[s], start[s + 1] - start[s], undecided[s]);
    unsigned char *busy = malloc((size_t)p->n);
    int *taken = NULL;
    while (st == DL_OK && q->n) {
        pf_round_t r;
        taken = realloc(taken, (size_t)q->n * sizeof(int));
        if (!busy || !taken) {
            st = DL_ERR_NOMEM;
            break;
        }
        memset(busy, 0, (size_t)p->n);
        st = build(p, q, &r, taken, busy);
        if (st == DL_OK)
            st = pf_plan_round(p, &r);
        if (st == DL_OK)
            st = settle(p, q, next, &r, taken);
        pf_round_free(&r);
        queue_free(q);
        queue_t *t = q;
        q = next;
        next = t;
    }
    queue_free(&a), queue_free(&b);
    free(a.it), free(b.it), free(busy), free(taken);
    return st;
}
