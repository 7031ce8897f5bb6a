/* The adaptive planner: names slow hosts, links and rails among many in a
 * few rounds of concurrent probes. It runs in stages:
 *   screen   rail-aligned groups of G hosts, every group and rail at once;
 *   bisect   each slow group halved, each half filled up to G with cleared
 *            hosts (the shape, and so the reference, stays the same); when
 *            neither half is slow the fault is a link across the boundary,
 *            whose two pairs are probed;
 *   confirm  each suspect again with other fillers before it is named.
 * A probe is judged by a sequential test on its iterations' log times
 * against the round's reference (the median of its screen probes, or of
 * the control probes of cleared hosts that run beside the others): it
 * stops as soon as its confidence interval lies on one side of half the
 * target fault, and one that does not decide is "undecided", never fine:
 * it is repeated at 4x the size. Who measures is a pf_prober_t: a model of
 * N nodes (fleet.c) or real ranks (planranks.c). No MPI here. */
#ifndef DL_PF_PLAN_H
#define DL_PF_PLAN_H

#include <stdint.h>

#include "../util/util.h"

typedef enum { PF_UNDECIDED, PF_FINE, PF_SLOW } pf_call_t;

/* What a probe's iterations said. */
typedef struct {
    pf_call_t call;
    int iters;
    double mean, sd;   /* of log(time / s) */
    double excess;     /* mean - the round's reference (log): log of the slowdown */
    double se;         /* its standard error, the reference's included */
    double time_s;     /* the probe's timed iterations, seconds */
} pf_outcome_t;

/* One round: disjoint probes, each a ring of hosts in order, on one rail or
 * all (rail -1); control probes (cleared hosts) give the reference. */
typedef struct {
    const char *stage;
    int nprobes, cap, nhosts_used, hosts_cap;
    int *start;     /* [nprobes + 1] into hosts */
    int *hosts;
    int *rail;      /* [nprobes] */
    int *control;   /* [nprobes] */
    double *nominal; /* [nprobes] a healthy call's seconds: probes of other sizes compare */
    uint64_t bytes;
    double theta;   /* decision line: half the target fault at this size (log) */
    double ref, ref_se;
    int fixed_ref;  /* no controls: ref is the last screen's (set by the planner) */
    pf_outcome_t *out;
    double wall_s;  /* set-up, warm-up and the longest probe */
    int max_iters;
} pf_round_t;

/* The sequential test's settings. */
typedef struct {
    double z;       /* one-sided z of each decision */
    int nmin, nmax; /* iterations before a decision; the most */
    double ref_q;   /* a screen's reference: this quantile of its probes' means (0: the
                       median; lower where a few probes may be half slow: real ranks) */
} pf_judge_cfg_t;

/* Who measures. run: every probe of r at once, until each is decided or
 * nmax, filling r->out and r->wall_s (pf_judge_round does it from one
 * timed iteration at a time). call_s: one healthy call's seconds (sizing). */
typedef struct {
    void *ctx;
    dl_status_t (*run)(void *ctx, pf_round_t *r, const pf_judge_cfg_t *j);
    double (*call_s)(void *ctx, int nhosts, uint64_t bytes);
    int nhosts, nrails;
    double setup_s; /* one round's communicator set-up */
    int min_hosts;  /* hosts a probe must span (real ranks: 2, as a probe of one host
                       measures only its inside; 0: any): an item whose probe cannot be
                       filled up to it waits a round, the controls leaving it fillers */
} pf_prober_t;

/* One timed iteration of probe p: seconds. */
typedef double (*pf_sample_fn)(void *ctx, const pf_round_t *r, int p);
/* The test itself: nmin iterations of every probe, the reference (median
 * of the controls' means, else of every probe's), then one more iteration
 * of each undecided probe (controls keep running) until all decide. */
dl_status_t pf_judge_round(pf_round_t *r, const pf_judge_cfg_t *j, pf_sample_fn f, void *ctx,
                           double setup_s);
/* The same test on iterations already timed (a prober that measures a step
 * of several iterations of every probe at once, then asks): t[p] holds n[p]
 * seconds of probe p. Probes with fewer than nmin stay undecided. Returns
 * the probes still open (undecided, not controls, fewer than nmax), -1 if
 * out of memory. */
int pf_judge_samples(pf_round_t *r, const pf_judge_cfg_t *j, double *const *t, const int *n);
/* The confidence of a call: P(the excess is on its side of theta). */
double pf_judge_confidence(const pf_round_t *r, int p);

dl_status_t pf_round_init(pf_round_t *r, const char *stage, uint64_t bytes);
/* Appends a probe of n hosts; returns its index or -1 (no memory). */
int pf_round_add(pf_round_t *r, const int *hosts, int n, int rail, int control);
void pf_round_free(pf_round_t *r);

typedef enum { PF_FIND_HOST, PF_FIND_LINK, PF_FIND_RAIL } pf_find_kind_t;

/* A finding: named (confirmed) or a warning (a suspect not confirmed, or a
 * probe that never decided). */
typedef struct {
    pf_find_kind_t kind;
    int a, b;            /* host, hosts of a link, or rail in a */
    int named;           /* 0: a warning */
    int inconclusive;    /* a warning because no probe decided */
    int flapping;        /* its iterations split between fine and slow */
    double slowdown;     /* the confirming probes' time ratio (weakest) */
    double confidence;   /* the weakest decision's */
    double spread;       /* sd of its log times beside the controls' */
    uint64_t bytes;
    int iters;
} pf_finding_t;

typedef struct {
    int group;           /* G: hosts in a screen probe (2..) */
    double target;       /* the fault to separate: 0.2 = 20% slower */
    uint64_t bytes;      /* the probes' first size */
    int orderings;       /* screen orderings (1: host order; 2: also shifted by G/2) */
    int all_pairs;       /* screen every pair (tournament orderings, G = 2) */
    int controls;        /* control probes beside bisect and confirm probes */
    int same_size;       /* an undecided probe is tried again at the same size, not 4x:
                            real ranks, where the reference of a round without controls
                            is the screen's, measured at the first size */
    double flap_margin;  /* flapping: a named item's log-time sd above twice the controls'
                            plus this (0: 0.05; real ranks: more, a shaped link's calls spread) */
    pf_judge_cfg_t judge;
} pf_plan_cfg_t;

typedef struct {
    const char *stage;
    int probes, max_iters;
    uint64_t bytes;
    double wall_s;
} pf_round_log_t;

typedef struct pf_plan {
    const pf_prober_t *pr;
    pf_plan_cfg_t cfg;
    int n;
    unsigned char *state;    /* [n] PF_H_* */
    int *pool, npool, next;  /* cleared hosts, handed out in turn as fillers */
    int *run_of, runs;       /* [npool] the fine screen probe each came from */
    pf_finding_t *finds;
    int nfinds;
    size_t finds_cap;
    pf_round_log_t *log;
    int rounds, probes;
    size_t log_cap;
    double wall_s;
    int *rail_named;         /* [nrails] */
    double screen_ref;       /* the last screen's reference: rounds without controls */
    int probe_rail;          /* bisect and confirm probes' rail: -1 all, else one not named */
    int reserve;             /* cleared hosts the controls leave to a round's fillers */
} pf_plan_t;

enum { PF_H_UNKNOWN, PF_H_CLEARED, PF_H_SUSPECT, PF_H_NAMED };

dl_status_t pf_plan_run(const pf_prober_t *pr, const pf_plan_cfg_t *cfg, pf_plan_t *p);
void pf_plan_free(pf_plan_t *p);

/* plan.c's parts, for bisect.c. */
dl_status_t pf_plan_round(pf_plan_t *p, pf_round_t *r);
int pf_plan_fill(pf_plan_t *p, int *dst, int n, unsigned char *busy);
void pf_plan_add_controls(pf_plan_t *p, pf_round_t *r, unsigned char *busy);
dl_status_t pf_plan_find(pf_plan_t *p, const pf_finding_t *f);
uint64_t pf_plan_size(const pf_plan_t *p, int nhosts, uint64_t bytes, double *theta);
/* rails.c: a rail slow in most of the screen's groups is measured again in
 * the next order's groups beside another rail and named when it stays slow
 * (p->rail_named). */
dl_status_t pf_plan_rails(pf_plan_t *p, const pf_round_t *screen, const int *next_perm);
/* Whether a named host, or a named link between neighbours of the ring,
 * explains a slow probe of these hosts. */
int pf_plan_explained(const pf_plan_t *p, const int *hosts, int n);
/* Bisects the slow sets (each a ring of hosts) down to hosts and links,
 * confirms them and records the findings; a set whose screen probe did not
 * decide (undecided[s]) is first measured whole again, larger. */
dl_status_t pf_bisect(pf_plan_t *p, int nsets, const int *start, const int *hosts,
                      const unsigned char *undecided);

#endif
