/* The adaptive planner's findings as preflight reports them (a modelled
 * fleet's and real ranks' alike): one check line each, named ones FAIL and
 * in the verdict, the rest WARN. */
#include "internal.h"

#include <stdio.h>

void pf_plan_subject(const pf_ctx_t *c, const pf_finding_t *f, char *buf, size_t len)
{
    if (f->kind == PF_FIND_HOST)
        snprintf(buf, len, "%s", c->lay.names[f->a]);
    else if (f->kind == PF_FIND_LINK)
        snprintf(buf, len, "%s-%s", c->lay.names[f->a], c->lay.names[f->b]);
    else
        snprintf(buf, len, "rail%d", f->a);
}

cJSON *pf_plan_finding_json(const pf_finding_t *f, const char *subj)
{
    static const char *const kinds[] = {"node", "link", "rail"};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", kinds[f->kind]);
    cJSON_AddStringToObject(o, "subject", subj);
    cJSON_AddBoolToObject(o, "named", f->named);
    cJSON_AddBoolToObject(o, "inconclusive", f->inconclusive);
    cJSON_AddBoolToObject(o, "flapping", f->flapping);
    cJSON_AddNumberToObject(o, "slowdown", f->slowdown);
    cJSON_AddNumberToObject(o, "confidence", f->confidence);
    cJSON_AddNumberToObject(o, "bytes", (double)f->bytes);
    cJSON_AddNumberToObject(o, "iterations", f->iters);
    return o;
}

void pf_plan_report_finding(pf_ctx_t *c, const pf_finding_t *f, const char *scope, cJSON *list)
{
    static const char *const scopes[] = {"node", "pair", "rail"};
    char subj[600], size[32];
    pf_plan_subject(c, f, subj, sizeof(subj));
    dl_size_format(f->bytes, size, sizeof(size));
    cJSON_AddItemToArray(list, pf_plan_finding_json(f, subj));
    if (f->named) {
        if (f->kind == PF_FIND_HOST)
            pf_blame_host(c, f->a);
        else if (f->kind == PF_FIND_LINK)
            pf_blame_pair(c, f->a, f->b);
        else
            pf_blame_rail(c, f->a);
    }
    dl_pf_status_t st = f->named ? DL_PF_FAIL : DL_PF_WARN;
    const char *why = f->named ? (f->flapping ? "confirmed; flapping: slow in part of its iterations"
                                              : "confirmed with other peers")
                      : f->inconclusive ? "inconclusive: no probe decided (never a pass)"
                                        : "not confirmed: noise";
    pf_check(c, st, "bandwidth", scope ? scope : scopes[f->kind], subj, pf_plan_finding_json(f, subj),
             "%.3fx the healthy time at %s (%d iterations), confidence %.5f; %s", f->slowdown,
             size, f->iters, f->confidence, why);
}


void pf_plan_round_log_json(const pf_plan_t *p, cJSON *parent)
{
    cJSON *rl = cJSON_AddArrayToObject(parent, "round_log");
    for (int i = 0; i < p->rounds; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "stage", p->log[i].stage);
        cJSON_AddNumberToObject(o, "probes", p->log[i].probes);
        cJSON_AddNumberToObject(o, "bytes", (double)p->log[i].bytes);
        cJSON_AddNumberToObject(o, "max_iterations", p->log[i].max_iters);
        cJSON_AddNumberToObject(o, "wall_s", p->log[i].wall_s);
        cJSON_AddItemToArray(rl, o);
    }
}
