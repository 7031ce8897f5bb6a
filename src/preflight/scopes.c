/* Scopes that localise a fault: each node alone, each rail, node pairs.
 * Members of a scope run at once; their figures are compared by median and
 * MAD; a low one is a suspect, measured again alone (a pair: against the
 * best host) and named only when it is still low. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    const char *scope;   /* "node", "rail", "pair" */
    char subject[300];
    double fig, median, retest;
    const char *peer;    /* pair retests: the known-good host */
    int confirmed;
} suspect_t;

static void record_suspect(pf_ctx_t *c, const suspect_t *s)
{
    if (c->rank != 0)
        return;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "scope", s->scope);
    cJSON_AddStringToObject(o, "subject", s->subject);
    cJSON_AddNumberToObject(o, "busbw_gbps", s->fig);
    cJSON_AddNumberToObject(o, "median_gbps", s->median);
    cJSON *r = cJSON_AddObjectToObject(o, "retest");
    if (s->peer)
        cJSON_AddStringToObject(r, "peer", s->peer);
    cJSON_AddNumberToObject(r, "busbw_gbps", s->retest);
    cJSON_AddBoolToObject(o, "confirmed", s->confirmed);
    cJSON_AddItemToArray(c->suspects, o);
}

static cJSON *fig_obj(double busbw, double median)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddNumberToObject(f, "busbw_gbps", busbw);
    if (median > 0)
        cJSON_AddNumberToObject(f, "median_gbps", median);
    return f;
}

/* The member whose ranks satisfy in(), measured alone. */
static dl_status_t measure_alone(pf_ctx_t *c, const int *in_member, double *fig)
{
    int *color = malloc((size_t)c->nranks * sizeof(int));
    if (!color)
        return DL_ERR_NOMEM;
    for (int r = 0; r < c->nranks; r++)
        color[r] = in_member[r] ? 0 : -1;
    dl_status_t st = pf_measure_members(c, color, 1, DL_COLL_ALLREDUCE, c->o->scope_bytes, fig, NULL);
    free(color);
    return st;
}

static void blame(pf_ctx_t *c, int is_node, int m)
{
    if (is_node)
        pf_blame_host(c, m);
    else
        pf_blame_rail(c, m);
}

/* Shared by node and rail scopes: lines, outliers and retests of members
 * whose ranks are those with key[r] == member. */
static dl_status_t judge_members(pf_ctx_t *c, const char *scope, const int *key, int n,
                                 const double *fig, const uint64_t *wrong,
                                 const pf_size_t *sizes, cJSON *list)
{
    int *low = calloc((size_t)n, sizeof(int)), *in = malloc((size_t)c->nranks * sizeof(int));
    double median = 0;
    dl_status_t st = low && in ? DL_OK : DL_ERR_NOMEM;
    if (st == DL_OK)
        dl_pf_low_outliers(fig, n, c->o->min_fraction, c->o->mad_k, low, &median);
    for (int m = 0; st == DL_OK && m < n; m++) {
        if (fig[m] < 0)
            continue;
        int is_node = scope[0] == 'n';
        char subject[300];
        if (is_node)
            snprintf(subject, sizeof(subject), "%s", c->lay.names[m]);
        else
            snprintf(subject, sizeof(subject), "rail%d", m);
        char note[300], sep[3] = "";
        pf_size_note(&sizes[m], "allreduce", note, sizeof(note));
        if (note[0])
            snprintf(sep, sizeof(sep), "; ");
        if (c->rank == 0) {
            cJSON *e = fig_obj(fig[m], 0);
            pf_size_json(e, &sizes[m]);
            cJSON_AddStringToObject(e, is_node ? "host" : "rail", subject);
            cJSON_AddNumberToObject(e, "wrong", (double)wrong[m]);
            cJSON_AddItemToArray(list, e);
        }
        if (wrong[m]) {
            blame(c, is_node, m);
            pf_check(c, DL_PF_FAIL, "correctness", scope, subject, fig_obj(fig[m], median),
                     "allreduce within the %s: %llu wrong elements", scope,
                     (unsigned long long)wrong[m]);
            continue;
        }
        if (!low[m]) { /* fewer than 3 members: measured, but judged by nothing */
            char cmp[64] = "";
            if (median > 0)
                snprintf(cmp, sizeof(cmp), " (median of %ss %.3f)", scope, median);
            else
                snprintf(cmp, sizeof(cmp), " (fewer than 3 %ss: no outlier test)", scope);
            pf_check(c, median > 0 ? DL_PF_PASS : DL_PF_SKIP, "bandwidth", scope, subject,
                     fig_obj(fig[m], median), "allreduce busbw %.3f GB/s%s%s%s", fig[m], cmp, sep,
                     note);
            continue;
        }
        suspect_t s = {.scope = scope, .fig = fig[m], .median = median};
        snprintf(s.subject, sizeof(s.subject), "%s", subject);
        for (int r = 0; r < c->nranks; r++)
            in[r] = key[r] == m;
        s.confirmed = 1;
        for (int t = 0; st == DL_OK && s.confirmed && t < PF_RETESTS; t++) {
            pf_step("retest");
            st = measure_alone(c, in, &s.retest);
            s.confirmed = s.retest >= 0 && pf_still_low(c, fig, n, m, s.retest);
        }
        record_suspect(c, &s);
        if (s.confirmed)
            blame(c, is_node, m);
        pf_check(c, s.confirmed ? DL_PF_FAIL : DL_PF_WARN, "bandwidth", scope, subject,
                 fig_obj(fig[m], median),
                 "allreduce busbw %.3f GB/s, below %.0f%% of the median %.3f; alone (last of up to %d): %.3f GB/s (%s)%s%s",
                 fig[m], 100 * c->o->min_fraction, median, PF_RETESTS, s.retest,
                 s.confirmed ? "confirmed" : "not confirmed: noise", sep, note);
    }
    free(low);
    free(in);
    return st;
}

/* A node or rail scope: one all-reduce figure per member (its ranks alone,
 * all members at once), then the outlier judgement. */
static dl_status_t scope_members(pf_ctx_t *c, const char *name, const int *member_of, int n)
{
    double *fig = malloc((size_t)n * sizeof(double));
    uint64_t *wrong = malloc((size_t)n * sizeof(uint64_t));
    pf_size_t *sizes = malloc((size_t)n * sizeof(pf_size_t));
    if (!fig || !wrong || !sizes) {
        free(fig);
        free(wrong);
        free(sizes);
        return DL_ERR_NOMEM;
    }
    char step[32];
    snprintf(step, sizeof(step), "scope %s", name);
    pf_step(step);
    dl_status_t st = pf_measure_members_sized(c, member_of, n, DL_COLL_ALLREDUCE,
                                              c->o->scope_bytes, fig, wrong, sizes);
    cJSON *list = c->rank == 0 ? cJSON_AddArrayToObject(c->scopes, name) : NULL;
    if (st == DL_OK)
        st = judge_members(c, name, member_of, n, fig, wrong, sizes, list);
    free(sizes);
    free(fig);
    free(wrong);
    return st;
}

static dl_status_t scope_nodes(pf_ctx_t *c)
{
    return scope_members(c, "node", c->lay.host_of, c->lay.nhosts);
}

static dl_status_t scope_rails(pf_ctx_t *c)
{
    return scope_members(c, "rail", c->lay.local_of, c->lay.max_local);
}

dl_status_t pf_pairs(pf_ctx_t *c);

dl_status_t pf_scopes(pf_ctx_t *c)
{
    dl_status_t st = DL_OK;
    if ((c->o->scopes & DL_PF_SCOPE_NODE) && c->lay.max_local > 1)
        st = scope_nodes(c);
    else
        pf_check(c, DL_PF_SKIP, "bandwidth", "node", "-", NULL,
                 c->lay.max_local > 1 ? "node scope not asked for" : "one rank per host");
    if (st == DL_OK && (c->o->scopes & DL_PF_SCOPE_RAIL) && c->lay.nhosts > 1)
        st = scope_rails(c);
    else if (st == DL_OK)
        pf_check(c, DL_PF_SKIP, "bandwidth", "rail", "-", NULL,
                 c->lay.nhosts > 1 ? "rail scope not asked for" : "one host");
    if (st == DL_OK && (c->o->scopes & DL_PF_SCOPE_PAIR) && c->lay.nhosts > 1)
        st = pf_pairs(c);
    else if (st == DL_OK)
        pf_check(c, DL_PF_SKIP, "bandwidth", "pair", "-", NULL,
                 c->lay.nhosts > 1 ? "pair scope not asked for" : "one host");
    if (st == DL_OK && (c->o->scopes & DL_PF_SCOPE_PLAN))
        st = pf_plan_scope(c);
    return st;
}
