/* A tune record read for report: its candidates per profile, the
 * recommendation and, given a sweep, how the curve's fusion advice compares
 * with tune's measured answer. Computed once (dl_an_tune_make), rendered as
 * text and JSON here, as HTML in html_tune.c, and charted by plot.c. */
#include "analysis.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double num(const cJSON *o, const char *k)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(j) ? j->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(j) ? j->valuestring : "";
}

/* A candidate's fusion size in bytes (Horovod's threshold, DDP's cap). */
static double fused_bytes(const cJSON *c)
{
    double cap = num(c, "bucket_cap_mb");
    return isfinite(cap) ? cap * 1048576.0 : num(c, "fusion_threshold_bytes");
}

/* How a candidate is named on a chart's axis: "25 MiB", "32 MiB/1 ms". */
static void cand_label(const cJSON *c, char *buf, size_t len)
{
    double cap = num(c, "bucket_cap_mb"), thr = num(c, "fusion_threshold_bytes");
    double cyc = num(c, "cycle_time_ms");
    if (isfinite(cap))
        snprintf(buf, len, "%g MiB", cap);
    else
        snprintf(buf, len, "%g MiB/%g ms", isfinite(thr) ? thr / 1048576 : 0, isfinite(cyc) ? cyc : 0);
}

static size_t prof_index(dl_tune_rep_t *t, const char *p)
{
    size_t j = 0;
    while (j < t->nprofs && strcmp(t->profs[j], p))
        j++;
    if (j == t->nprofs && j < DL_ARRAY_SIZE(t->profs))
        snprintf(t->profs[t->nprofs++], 64, "%s", p);
    return j;
}

/* Candidates with their figures, in the record's order; a candidate is
 * recommended when a setting of the recommendation names its profile and
 * exposed time. */
static dl_status_t cands_make(dl_tune_rep_t *t)
{
    const cJSON *cands = cJSON_GetObjectItemCaseSensitive(t->tune, "candidates");
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(t->tune, "recommendation");
    t->settings = cJSON_GetObjectItemCaseSensitive(rec, "settings");
    snprintf(t->verdict, sizeof(t->verdict), "%s", str(rec, "verdict"));
    size_t n = (size_t)cJSON_GetArraySize(cands) + 1;
    t->cand = calloc(n, sizeof(*t->cand));
    t->xnames = calloc(n, sizeof(*t->xnames));
    if (!t->cand || !t->xnames)
        return DL_ERR_NOMEM;
    for (const cJSON *c = cands ? cands->child : NULL; c; c = c->next) {
        const char *p = str(c, "profile");
        size_t k = p[0] ? prof_index(t, p) : DL_ARRAY_SIZE(t->profs);
        if (k == DL_ARRAY_SIZE(t->profs)) /* no profile, or past 16 of them */
            continue;
        dl_tune_cand_t *o = &t->cand[t->ncand++];
        *o = (dl_tune_cand_t){.json = c, .prof = k, .bytes = fused_bytes(c),
                              .exposed_us = num(c, "exposed_us"), .comm_us = num(c, "comm_us"),
                              .step_us = num(c, "step_us"), .ci_us = num(c, "step_ci95_us"),
                              .curve_us = num(c, "curve_step_us")};
        o->calls = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "buckets"));
        cand_label(c, o->label, sizeof(o->label));
        while (o->x < t->nx && strcmp(t->xnames[o->x], o->label))
            o->x++;
        if (o->x == t->nx)
            t->xnames[t->nx++] = o->label;
        for (const cJSON *s = t->settings ? t->settings->child : NULL; s; s = s->next) {
            int is = isfinite(o->exposed_us) && num(s, "exposed_us") == o->exposed_us &&
                     strcmp(str(s, "profile"), p) == 0;
            o->recommended |= is;
            o->first |= is && s == t->settings->child;
        }
    }
    return DL_OK;
}

/* The curve's HOROVOD_FUSION_THRESHOLD beside tune's first choice (its
 * recommendation's first setting: the least exposed, or among settings the
 * CIs cannot tell apart the least communication) and the measured
 * candidate nearest the curve's size (on a log scale). */
static void compare_make(dl_tune_rep_t *t, const dl_record_t *r)
{
    t->best_bytes = t->best_exp = t->near_bytes = t->near_exp = NAN;
    t->curve_bytes = r ? dl_an_fusion_threshold(r, t->curve_prof, sizeof(t->curve_prof)) : 0;
    double lt = log2((double)t->curve_bytes + 1);
    for (size_t i = 0; i < t->ncand; i++) {
        const dl_tune_cand_t *c = &t->cand[i];
        if (!isfinite(c->exposed_us))
            continue;
        if (c->first && !isfinite(t->best_exp))
            t->best_bytes = c->bytes, t->best_exp = c->exposed_us;
        if (!isfinite(t->near_bytes) ||
            fabs(log2(c->bytes + 1) - lt) < fabs(log2(t->near_bytes + 1) - lt) ||
            (c->bytes == t->near_bytes && c->exposed_us < t->near_exp))
            t->near_bytes = c->bytes, t->near_exp = c->exposed_us;
    }
    for (size_t i = 0; i < t->ncand; i++)
        t->agrees |= t->cand[i].recommended && t->cand[i].bytes == t->near_bytes;
    t->compared = t->curve_bytes && isfinite(t->best_exp);
    if (!t->compared)
        snprintf(t->line, sizeof(t->line), "not compared: %s",
                 !r ? "no sweep given (report SWEEP --tune FILE compares a sweep curve's advice)"
                 : !t->curve_bytes ? "no all-reduce curve in this run"
                                   : "the tune record measured nothing");
    else
        snprintf(t->line, sizeof(t->line),
                 "the curve says %.4g MiB (profile %s); tune measured %s %.4g MiB (exposed "
                 "%.4g ms per step); tune's nearest candidate to the curve's size, %.4g MiB, "
                 "exposed %.4g ms: %s",
                 (double)t->curve_bytes / 1048576, t->curve_prof,
                 strcmp(t->verdict, "winner") == 0 ? "the winner" : "among the best",
                 t->best_bytes / 1048576, t->best_exp / 1e3, t->near_bytes / 1048576,
                 t->near_exp / 1e3,
                 t->agrees ? "the curve's advice agrees with the measurement"
                           : "the curve's advice is not what the measured step prefers: use tune's");
}

dl_status_t dl_an_tune_make(const cJSON *tune, const dl_record_t *r, dl_tune_rep_t *out)
{
    memset(out, 0, sizeof(*out));
    out->tune = tune;
    const cJSON *mo = cJSON_GetObjectItemCaseSensitive(tune, "model");
    snprintf(out->model, sizeof(out->model), "%s", str(mo, "name"));
    snprintf(out->framework, sizeof(out->framework), "%s", str(tune, "framework"));
    out->backward_ms = num(tune, "backward_ms");
    dl_status_t st = cands_make(out);
    if (st == DL_OK)
        compare_make(out, r);
    return st;
}

void dl_an_tune_free(dl_tune_rep_t *t)
{
    free(t->cand);
    free(t->xnames);
    memset(t, 0, sizeof(*t));
}

/* ---- text and JSON ---- */

void dl_an_tune_print(FILE *f, const dl_tune_rep_t *t)
{
    fprintf(f, "\n== tune's measured answer beside the curve ==\n  %s\n", t->line);
    fprintf(f, "  tune's recommendation (%s, %s): %s\n", t->model, t->framework,
            t->verdict[0] ? t->verdict : "none");
    for (const cJSON *s = t->settings ? t->settings->child : NULL; s; s = s->next) {
        fprintf(f, "    profile %s, exposed %.4g ms, communication %.4g ms:\n", str(s, "profile"),
                num(s, "exposed_us") / 1e3, num(s, "comm_us") / 1e3);
        const cJSON *lines = cJSON_GetObjectItemCaseSensitive(s, "paste");
        for (const cJSON *l = lines ? lines->child : NULL; l; l = l->next)
            if (cJSON_IsString(l))
                fprintf(f, "      %s\n", l->valuestring);
    }
}

void dl_an_tune_json(cJSON *j, const dl_tune_rep_t *t)
{
    cJSON_AddStringToObject(j, "tune_comparison", t->line);
    cJSON *o = cJSON_AddObjectToObject(j, "tune");
    cJSON_AddStringToObject(o, "model", t->model);
    cJSON_AddStringToObject(o, "framework", t->framework);
    cJSON_AddBoolToObject(o, "compared", t->compared);
    if (t->compared) {
        cJSON_AddNumberToObject(o, "curve_fusion_bytes", (double)t->curve_bytes);
        cJSON_AddStringToObject(o, "curve_profile", t->curve_prof);
        cJSON_AddNumberToObject(o, "best_bytes", t->best_bytes);
        cJSON_AddNumberToObject(o, "best_exposed_us", t->best_exp);
        cJSON_AddNumberToObject(o, "nearest_bytes", t->near_bytes);
        cJSON_AddNumberToObject(o, "nearest_exposed_us", t->near_exp);
        cJSON_AddBoolToObject(o, "agrees", t->agrees);
    }
    cJSON_AddStringToObject(o, "verdict", t->verdict);
    cJSON_AddItemToObject(o, "settings", t->settings ? cJSON_Duplicate(t->settings, 1)
                                                     : cJSON_CreateArray());
}
