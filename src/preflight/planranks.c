/* The adaptive planner on real ranks (plan.h's pf_prober_t): a probe is
 * every rank of a set of hosts (or one rail of them), every probe of a
 * round at once on its own MPI_Comm_split sub-communicator, as the scopes
 * measure (members.c). A step times a few back-to-back all-reduces of each
 * probe still open; then every rank holds every probe's times and runs the
 * same sequential judge on them (pf_judge_samples), so all ranks agree on
 * which probes go on, and the planner takes the same path on every rank,
 * without a broadcast. planscope.c reports what it found. */
#include "internal.h"
#include "planranks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/engine.h"

/* This rank's probe in r (-1: none) and its place in the probe's ring. */
static void my_probe(const pf_ctx_t *c, const pf_round_t *r, int *color, int *key)
{
    int h = c->lay.host_of[c->rank], l = c->lay.local_of[c->rank];
    *color = -1;
    *key = 0;
    for (int q = 0; q < r->nprobes; q++)
        for (int i = r->start[q]; i < r->start[q + 1]; i++)
            if (r->hosts[i] == h && (r->rail[q] < 0 || r->rail[q] == l)) {
                *color = q;
                *key = (i - r->start[q]) * c->lay.max_local + l;
            }
}

/* The ranks of probe q. */
static int probe_ranks(const pf_ctx_t *c, const pf_round_t *r, int q)
{
    int n = 0;
    for (int k = 0; k < c->nranks; k++)
        for (int i = r->start[q]; i < r->start[q + 1]; i++)
            n += c->lay.host_of[k] == r->hosts[i] && (r->rail[q] < 0 || r->rail[q] == c->lay.local_of[k]);
    return n;
}

/* A healthy call's seconds, for comparing probes of other shapes in one
 * round: a ring all-reduce's bytes at a nominal link speed (only ratios
 * matter: the judge compares probes with each other). No latency term, so
 * the planner never grows the size for it: a model is no measurement of
 * these hosts, and the size is --scope-size, at most PF_RANKS_BYTES. */
static double call_s(void *ctx, int nhosts, uint64_t bytes)
{
    const pf_ranks_t *k = ctx;
    int m = nhosts * (k->c->lay.max_local > 0 ? k->c->lay.max_local : 1);
    return (double)bytes * 2 * (m - 1) / (m > 0 ? m : 1) / (PF_RANKS_GBPS * 1e9);
}

/* This rank's member of a round: its backend and case on the probe's
 * sub-communicator, and the calls a step may take (a probe whose call is
 * long takes fewer, at least one, so a step stays within its share). */
typedef struct {
    MPI_Comm sub;
    dl_xcomm_t x;
    pf_be_t b;
    dl_case_t cs;
    int open, per_step;
    double warm_s;
} member_t;

/* Failure agreed on the member's ranks, with the values in v (max). */
static dl_status_t member_max(member_t *m, dl_status_t st, double *v, int n)
{
    double *w = malloc(((size_t)n + 1) * sizeof(double));
    if (!w)
        return DL_ERR_NOMEM;
    memcpy(w, v, (size_t)n * sizeof(double));
    w[n] = st != DL_OK;
    dl_status_t xs = m->x.max_doubles(m->x.arg, w, (size_t)n + 1);
    memcpy(v, w, (size_t)n * sizeof(double));
    int bad = w[n] > 0;
    free(w);
    return xs != DL_OK ? xs : st != DL_OK ? st : bad ? DL_ERR_COMM : DL_OK;
}

static dl_status_t member_open(pf_ranks_t *k, member_t *m, uint64_t bytes)
{
    pf_ctx_t *c = k->c;
    int n, r;
    MPI_Comm_size(m->sub, &n);
    MPI_Comm_rank(m->sub, &r);
    if (n < 2) /* a probe of one rank measures nothing */
        return DL_OK;
    dl_xcomm_mpi_init(&m->x, &m->sub);
    dl_status_t st = pf_be_open(c, &m->x, bytes, &m->b);
    m->open = st == DL_OK;
    dl_case_init(&m->cs, dl_colls[DL_COLL_ALLREDUCE], DL_DT_FLOAT32, DL_OP_SUM, DL_PLACE_OUT, 0,
                 bytes, n, r);
    if (st == DL_OK)
        st = m->b.w.ops.prepare(&m->b.w, &m->cs);
    double warm = 0, total = 0;
    if (st == DL_OK) /* the warm-up: one call, untimed by the judge, times the steps */
        st = m->b.w.ops.run(&m->b.w, &m->cs, 1, &warm, &total);
    st = member_max(m, st, &warm, 1);
    m->warm_s = warm;
    m->per_step = warm > 0 ? (int)(k->step_s / warm) : PF_RANKS_STEP;
    m->per_step = m->per_step < 1 ? 1 : m->per_step > PF_RANKS_STEP ? PF_RANKS_STEP : m->per_step;
    return st;
}

static void member_close(pf_ranks_t *k, member_t *m)
{
    if (m->open)
        pf_be_close(k->c, &m->b);
    m->open = 0;
}

/* Every probe's times so far, the same on every rank: t[q][0..n[q]). */
typedef struct {
    int np, nmax;
    double *buf;   /* [np * nmax] times, then [np] counts, then a failure flag */
    double **t;
    int *n;
    unsigned char *go; /* [np] measures in the next step */
} samples_t;

static dl_status_t samples_init(samples_t *s, int np, int nmax)
{
    *s = (samples_t){.np = np, .nmax = nmax};
    s->buf = calloc((size_t)np * nmax + np + 1, sizeof(double));
    s->t = malloc((size_t)np * sizeof(double *));
    s->n = calloc((size_t)np, sizeof(int));
    s->go = malloc((size_t)np);
    for (int q = 0; s->t && q < np; q++)
        s->t[q] = s->buf + (size_t)q * nmax;
    if (s->go)
        memset(s->go, 1, (size_t)np);
    return s->buf && s->t && s->n && s->go ? DL_OK : DL_ERR_NOMEM;
}

static void samples_free(samples_t *s)
{
    free(s->buf), free(s->t), free(s->n), free(s->go);
}

/* One step: this rank's probe, if it goes on, times its calls (nmin in
 * the first step); then everyone learns every probe's times. */
static dl_status_t step(pf_ctx_t *c, member_t *m, int q, samples_t *s, dl_status_t st,
                        const pf_judge_cfg_t *j)
{
    int np = s->np;
    if (st == DL_OK && q >= 0 && m->open && s->go[q]) {
        int want = s->n[q] ? m->per_step : (j->nmin > m->per_step ? j->nmin : m->per_step);
        want = want < s->nmax - s->n[q] ? want : s->nmax - s->n[q];
        double *t = s->t[q] + s->n[q], total = 0;
        if (want > 0) {
            st = m->b.w.ops.run(&m->b.w, &m->cs, want, t, &total);
            st = member_max(m, st, t, want); /* each call: the slowest rank's time */
        }
        s->buf[(size_t)np * s->nmax + q] = s->n[q] + (want > 0 ? want : 0);
    }
    s->buf[(size_t)np * s->nmax + np] = st != DL_OK;
    if (pf_quiet_barrier(c->world) != DL_OK ||
        MPI_Allreduce(MPI_IN_PLACE, s->buf, np * s->nmax + np + 1, MPI_DOUBLE, MPI_MAX,
                      c->world) != MPI_SUCCESS)
        return DL_ERR_COMM;
    for (int p = 0; p < np; p++)
        s->n[p] = (int)s->buf[(size_t)np * s->nmax + p];
    if (s->buf[(size_t)np * s->nmax + np] > 0)
        return pf_faults(c, DL_ERR_COMM, "plan probe");
    return DL_OK;
}

static const char *const call_names[] = {"undecided", "fine", "slow"};

/* Rank 0: each probe of the round as the judge saw it. */
static void log_round(pf_ranks_t *k, const pf_round_t *r)
{
    for (int q = 0; k->log && q < r->nprobes; q++) {
        cJSON *o = cJSON_CreateObject(), *hs = cJSON_AddArrayToObject(o, "hosts");
        cJSON_AddNumberToObject(o, "round", k->rounds);
        cJSON_AddStringToObject(o, "stage", r->stage);
        for (int i = r->start[q]; i < r->start[q + 1]; i++)
            cJSON_AddItemToArray(hs, cJSON_CreateString(k->c->lay.names[r->hosts[i]]));
        cJSON_AddBoolToObject(o, "control", r->control[q]);
        cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
        cJSON_AddStringToObject(o, "call", call_names[r->out[q].call]);
        cJSON_AddNumberToObject(o, "slowdown", exp(r->out[q].excess));
        cJSON_AddNumberToObject(o, "iterations", r->out[q].iters);
        cJSON_AddItemToArray(k->log, o);
    }
}

/* Two-host probes: their busbw (the median call) into the pair matrix. */
static void record_pairs(pf_ranks_t *k, const pf_round_t *r, const samples_t *s)
{
    int nh = k->c->lay.nhosts;
    for (int q = 0; q < r->nprobes; q++) {
        if (r->start[q + 1] - r->start[q] != 2 || s->n[q] < 1)
            continue;
        double med = dl_median(s->t[q], (size_t)s->n[q]);
        double bw = dl_busbw(dl_colls[DL_COLL_ALLREDUCE], probe_ranks(k->c, r, q), r->bytes, med);
        int a = r->hosts[r->start[q]], b = r->hosts[r->start[q] + 1];
        if (bw > k->pair[a * nh + b])
            k->pair[a * nh + b] = k->pair[b * nh + a] = bw;
    }
}

static dl_status_t run(void *ctx, pf_round_t *r, const pf_judge_cfg_t *j)
{
    pf_ranks_t *k = ctx;
    pf_ctx_t *c = k->c;
    double t0 = MPI_Wtime();
    char what[64];
    snprintf(what, sizeof(what), "plan round %d (%s)", ++k->rounds, r->stage);
    pf_step(what);
    samples_t s;
    dl_status_t st = samples_init(&s, r->nprobes, j->nmax), lst = DL_OK;
    int q, key;
    my_probe(c, r, &q, &key);
    member_t m = {.sub = MPI_COMM_NULL};
    if (st == DL_OK && MPI_Comm_split(c->world, q >= 0 ? q : MPI_UNDEFINED, key, &m.sub) != MPI_SUCCESS)
        st = DL_ERR_COMM;
    if (st == DL_OK && m.sub != MPI_COMM_NULL)
        lst = member_open(k, &m, r->bytes);
    /* Each step adds a call to every probe that goes on: nmax steps at most
     * (a probe of one rank never measures, and stays undecided). */
    for (int left = 1, steps = 0; st == DL_OK && left > 0 && steps < j->nmax; steps++) {
        st = step(c, &m, q, &s, lst, j);
        left = st == DL_OK ? pf_judge_samples(r, j, s.t, s.n) : 0;
        if (left < 0)
            st = DL_ERR_NOMEM;
        for (int p = 0; p < r->nprobes; p++) /* the controls run while others decide */
            s.go[p] = s.n[p] < j->nmax &&
                      (r->out[p].call == PF_UNDECIDED || (r->control[p] && left > 0));
    }
    member_close(k, &m);
    if (m.sub != MPI_COMM_NULL)
        MPI_Comm_free(&m.sub);
    if (st == DL_OK)
        record_pairs(k, r, &s);
    if (st == DL_OK)
        log_round(k, r);
    samples_free(&s);
    r->wall_s = MPI_Wtime() - t0;
    return st;
}

dl_status_t pf_ranks_open(pf_ranks_t *k, pf_ctx_t *c)
{
    int nh = c->lay.nhosts;
    *k = (pf_ranks_t){.c = c, .step_s = pf_figure_s(c->o) / 4};
    k->pair = malloc((size_t)nh * nh * sizeof(double));
    for (int i = 0; k->pair && i < nh * nh; i++)
        k->pair[i] = -1;
    k->log = c->rank == 0 ? cJSON_CreateArray() : NULL;
    k->pr = (pf_prober_t){.ctx = k, .run = run, .call_s = call_s, .nhosts = nh, .nrails = 1,
                          .min_hosts = 2};
    return k->pair ? DL_OK : DL_ERR_NOMEM;
}

void pf_ranks_close(pf_ranks_t *k)
{
    free(k->pair);
    cJSON_Delete(k->log);
    k->pair = NULL;
    k->log = NULL;
}
