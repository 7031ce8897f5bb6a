/* The adaptive planner's prober over real ranks (planranks.c) and what the
 * plan scope (planscope.c) reads back from it. */
#ifndef DL_PF_PLANRANKS_H
#define DL_PF_PLANRANKS_H

#include "internal.h"

/* Why these differ from the modelled fleet's (docs/preflight.md, "The
 * planner on real ranks"): probes of 2 hosts, so every probe's inter-host
 * traffic is one link and few hosts still give a screen of several probes;
 * a 2x target, as noise on shared or loaded hosts is far above 20%. */
#define PF_RANKS_GROUP 2          /* hosts in a screen probe */
#define PF_RANKS_TARGET 1.0       /* the slowdown to separate: 2x */
#define PF_RANKS_BYTES (512u << 10) /* a probe's size, at most (--scope-size when smaller) */
#define PF_RANKS_STEP 6           /* timed calls of a probe per step after the first */
#define PF_RANKS_GBPS 1.0         /* the call model's link speed (no latency: the size is
                                     never grown by it, see call_s) */
#define PF_RANKS_MIN_HOSTS 4

typedef struct {
    pf_ctx_t *c;
    pf_prober_t pr;
    int rounds;
    double *pair;  /* [nh * nh] busbw of two-host probes (the best), -1: none */
    double step_s; /* a step's share: a probe whose calls are long takes fewer */
    cJSON *log;    /* rank 0: every probe of every round, as judged */
} pf_ranks_t;

dl_status_t pf_ranks_open(pf_ranks_t *k, pf_ctx_t *c);
void pf_ranks_close(pf_ranks_t *k);

#endif
