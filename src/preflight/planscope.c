/* The plan scope (--scopes plan): the adaptive planner (plan.c) localising
 * slow hosts and links on these ranks (planranks.c), in a number of rounds
 * that grows with the faults rather than with the hosts (the pair scope
 * takes N-1). Its findings come out as every scope's do: check lines, the
 * verdict, suspects, and the pair matrix of the two-host probes it ran. */
#include "planranks.h"

#include <stdio.h>
#include <stdlib.h>

static pf_plan_cfg_t ranks_cfg(const pf_ctx_t *c)
{
    uint64_t b = c->o->scope_bytes < PF_RANKS_BYTES ? c->o->scope_bytes : PF_RANKS_BYTES;
    /* z 3: tens of decisions here, not the fleet's thousands; the lower
     * quartile as a screen's reference: of 4 probes, 2 may be slow. */
    return (pf_plan_cfg_t){.group = PF_RANKS_GROUP, .target = PF_RANKS_TARGET, .bytes = b,
                           .orderings = 2, .controls = 3, .flap_margin = 0.5, .same_size = 1,
                           .judge = {.z = 3, .nmin = 4, .nmax = 48, .ref_q = 0.25}};
}

/* A named host's pairs and a named link's are the slow cells. */
static int slow_cell(const void *arg, int a, int b)
{
    const pf_plan_t *p = arg;
    for (int i = 0; i < p->nfinds; i++) {
        const pf_finding_t *f = &p->finds[i];
        if (f->named && f->kind == PF_FIND_HOST && (f->a == a || f->a == b))
            return 1;
        if (f->named && f->kind == PF_FIND_LINK &&
            ((f->a == a && f->b == b) || (f->a == b && f->b == a)))
            return 1;
    }
    return 0;
}

/* The pair matrix as the pair scope writes it (pairs.c), from the probes
 * of two hosts: null where a pair was never a probe. */
static void plan_matrix(const pf_ctx_t *c, const pf_plan_t *p, const pf_ranks_t *k, cJSON *o)
{
    int nh = c->lay.nhosts, nb = 0;
    double *best = malloc((size_t)nh * sizeof(double));
    for (int a = 0; best && a < nh; a++) {
        double x = -1;
        for (int b = 0; b < nh; b++)
            x = k->pair[a * nh + b] > x ? k->pair[a * nh + b] : x;
        if (x >= 0)
            best[nb++] = x;
    }
    pf_pair_matrix_json(c, k->pair, best && nb ? dl_median(best, (size_t)nb) : 0, slow_cell, p, o);
    free(best);
}

static void suspect(pf_ctx_t *c, const pf_finding_t *f)
{
    char subj[600];
    pf_plan_subject(c, f, subj, sizeof(subj));
    cJSON *o = pf_plan_finding_json(f, subj);
    cJSON_AddStringToObject(o, "scope", "plan");
    cJSON_AddBoolToObject(o, "confirmed", f->named);
    cJSON_AddItemToArray(c->suspects, o);
}

static void plan_report(pf_ctx_t *c, const pf_plan_t *p, pf_ranks_t *k,
                        const pf_plan_cfg_t *cfg)
{
    if (c->rank != 0)
        return;
    cJSON *o = cJSON_AddObjectToObject(c->scopes, "plan");
    cJSON_AddNumberToObject(o, "group", cfg->group);
    cJSON_AddNumberToObject(o, "target", cfg->target);
    cJSON_AddNumberToObject(o, "bytes", (double)cfg->bytes);
    cJSON_AddNumberToObject(o, "rounds", p->rounds);
    cJSON_AddNumberToObject(o, "probes", p->probes);
    cJSON_AddNumberToObject(o, "wall_s", p->wall_s);
    pf_plan_round_log_json(p, o);
    cJSON_AddItemToObject(o, "probes_log", k->log); /* the document takes it */
    k->log = NULL;
    plan_matrix(c, p, k, o);
    cJSON *list = cJSON_AddArrayToObject(o, "findings");
    int left = 0; /* hosts named or warned about: not cleared */
    for (int i = 0; i < p->nfinds; i++)
        left += p->finds[i].kind == PF_FIND_HOST;
    pf_check(c, left < p->n ? DL_PF_PASS : DL_PF_SKIP, "bandwidth", "plan", "-", NULL,
             "%d of %d hosts cleared: screened in pairs of neighbours in 2 host orders, %d "
             "rounds, %d probes, %.1f s", p->n - left, p->n, p->rounds, p->probes, p->wall_s);
    for (int i = 0; i < p->nfinds; i++) {
        pf_plan_report_finding(c, &p->finds[i], "plan", list);
        suspect(c, &p->finds[i]);
    }
}

dl_status_t pf_plan_scope(pf_ctx_t *c)
{
    if (c->lay.nhosts < PF_RANKS_MIN_HOSTS) {
        pf_check(c, DL_PF_SKIP, "bandwidth", "plan", "-", NULL,
                 "%d hosts: the planner needs %d (a screen's reference is the lower quartile "
                 "of its probes); the pair scope covers so few", c->lay.nhosts, PF_RANKS_MIN_HOSTS);
        return DL_OK;
    }
    pf_ranks_t k;
    pf_plan_t p = {0};
    pf_plan_cfg_t cfg = ranks_cfg(c);
    dl_status_t st = pf_ranks_open(&k, c);
    if (st == DL_OK)
        st = pf_plan_run(&k.pr, &cfg, &p);
    if (st == DL_OK)
        plan_report(c, &p, &k, &cfg);
    pf_plan_free(&p);
    pf_ranks_close(&k);
    return st;
}
