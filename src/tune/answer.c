/* tune's answer: each candidate's step placed against the backward pass,
 * the curve's prediction beside it, the recommendation (least exposed
 * communication, ties within the CIs), the summary, the "tune" object of
 * run.json and --json; and --plan-only's buckets. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"
#include "../analysis/analysis.h"
#include "../results/results.h"

#define MIB (1024.0 * 1024.0)

static double num(const cJSON *o, const char *k)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(j) ? j->valuedouble : NAN;
}

void dl_tune_meas_step(const dl_tune_t *t, dl_tune_meas_t *m, double step_s, double ci_s,
                       int converged)
{
    dl_timeline_t tl;
    m->measured = 1;
    m->step_s = step_s;
    m->step_ci_s = ci_s;
    m->converged = converged;
    dl_timeline(&t->c[m->cand].bs, m->call_s, t->backward_s, &tl);
    m->comm_s = tl.comm_s;
    m->exposed_s = tl.exposed_s;
    m->end_s = tl.end_s;
}

/* The curve's time for each fused size, summed: what a sweep alone predicts. */
static void predict(const dl_tune_t *t, const dl_record_t *curve, dl_tune_meas_t *ms, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dl_curve_t cv;
        ms[i].pred_s = NAN;
        if (dl_curve_get(curve, ms[i].profile, "allreduce", &cv) != DL_OK &&
            dl_curve_get(curve, curve->nprofs ? curve->profs[0].name : "", "allreduce", &cv) != DL_OK)
            continue;
        double sum = 0;
        const dl_buckets_t *bs = &t->c[ms[i].cand].bs;
        for (size_t k = 0; k < bs->n; k++)
            sum += dl_curve_time_at(&cv, bs->b[k].bytes) * 1e-6;
        ms[i].pred_s = sum;
        dl_curve_free(&cv);
    }
}

/* The lines a user pastes for candidate c (and its profile's settings). */
static cJSON *paste_lines(const dl_tune_t *t, const dl_tune_setting_t *c, const dl_tune_meas_t *m)
{
    cJSON *a = cJSON_CreateArray();
    char line[256];
    if (t->horovod) {
        snprintf(line, sizeof(line), "HOROVOD_FUSION_THRESHOLD=%llu",
                 (unsigned long long)(c->thr_mb * MIB));
        cJSON_AddItemToArray(a, cJSON_CreateString(line));
        snprintf(line, sizeof(line), "HOROVOD_CYCLE_TIME=%g", c->cycle_ms);
        cJSON_AddItemToArray(a, cJSON_CreateString(line));
    } else {
        snprintf(line, sizeof(line), "DistributedDataParallel(..., bucket_cap_mb=%g)", c->cap_mb);
        cJSON_AddItemToArray(a, cJSON_CreateString(line));
    }
    for (int i = 0; i < m->nenv; i++) {
        const char *eq = strchr(m->env[i], '=');
        snprintf(line, sizeof(line), "%.*s", (int)(eq - m->env[i]), m->env[i]);
        if (dl_env_credential_like(line)) /* the record's rule for a profile's env */
            continue;
        snprintf(line, sizeof(line), "%s", m->env[i]);
        cJSON_AddItemToArray(a, cJSON_CreateString(line));
    }
    return a;
}

static int by_exposed(const void *x, const void *y)
{
    const dl_tune_meas_t *a = *(dl_tune_meas_t *const *)x, *b = *(dl_tune_meas_t *const *)y;
    if (a->exposed_s != b->exposed_s)
        return a->exposed_s < b->exposed_s ? -1 : 1;
    return (a->comm_s > b->comm_s) - (a->comm_s < b->comm_s);
}

static int by_comm(const void *x, const void *y)
{
    const dl_tune_meas_t *a = *(dl_tune_meas_t *const *)x, *b = *(dl_tune_meas_t *const *)y;
    return (a->comm_s > b->comm_s) - (a->comm_s < b->comm_s);
}

static cJSON *cand_json(const dl_tune_t *t, const dl_tune_meas_t *m)
{
    const dl_tune_setting_t *c = &t->c[m->cand];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "profile", m->profile);
    if (t->horovod) {
        cJSON_AddNumberToObject(o, "fusion_threshold_bytes", (double)(uint64_t)(c->thr_mb * MIB));
        cJSON_AddNumberToObject(o, "cycle_time_ms", c->cycle_ms);
    } else
        cJSON_AddNumberToObject(o, "bucket_cap_mb", c->cap_mb);
    cJSON_AddBoolToObject(o, "measured", m->measured);
    cJSON *bs = cJSON_AddArrayToObject(o, "buckets");
    for (size_t k = 0; k < c->bs.n; k++) {
        cJSON *b = cJSON_CreateObject();
        cJSON_AddItemToArray(bs, b);
        cJSON_AddNumberToObject(b, "bytes", (double)c->bs.b[k].bytes);
        cJSON_AddStringToObject(b, "dtype", dl_dtype_names[c->bs.b[k].dtype]);
        cJSON_AddNumberToObject(b, "tensors", (double)c->bs.b[k].n);
        cJSON_AddNumberToObject(b, "ready_us", c->bs.b[k].ready_s * 1e6);
        if (m->measured)
            cJSON_AddNumberToObject(b, "call_us", m->call_s[k] * 1e6);
    }
    if (!m->measured)
        return o;
    cJSON_AddNumberToObject(o, "step_us", m->step_s * 1e6);
    cJSON_AddNumberToObject(o, "step_ci95_us", m->step_ci_s * 1e6);
    cJSON_AddBoolToObject(o, "converged", m->converged);
    cJSON_AddNumberToObject(o, "comm_us", m->comm_s * 1e6);
    cJSON_AddNumberToObject(o, "end_us", m->end_s * 1e6);
    cJSON_AddNumberToObject(o, "exposed_us", m->exposed_s * 1e6);
    if (isfinite(m->pred_s)) {
        cJSON_AddNumberToObject(o, "curve_step_us", m->pred_s * 1e6);
        cJSON_AddNumberToObject(o, "curve_error", (m->pred_s - m->step_s) / m->step_s);
    }
    return o;
}

/* The recommendation: least exposed time; a winner only when its lead over
 * the next is beyond both CIs, else every setting within them, the least
 * communication first. */
static cJSON *recommend(const dl_tune_t *t, dl_tune_meas_t **ok, size_t n)
{
    cJSON *r = cJSON_CreateObject();
    if (!n) {
        cJSON_AddStringToObject(r, "verdict", "nothing measured");
        return r;
    }
    qsort(ok, n, sizeof(*ok), by_exposed);
    size_t tie = 1;
    while (tie < n && ok[tie]->exposed_s - ok[0]->exposed_s <= ok[0]->step_ci_s + ok[tie]->step_ci_s)
        tie++;
    /* Settings whose exposed times the CIs cannot tell apart: the one with
     * the least communication first (the least contention with compute). */
    qsort(ok, tie, sizeof(*ok), by_comm);
    cJSON_AddStringToObject(r, "verdict", tie == 1 ? "winner" : "any of these");
    cJSON *cs = cJSON_AddArrayToObject(r, "settings");
    for (size_t i = 0; i < tie; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(cs, o);
        cJSON_AddStringToObject(o, "profile", ok[i]->profile);
        cJSON_AddNumberToObject(o, "exposed_us", ok[i]->exposed_s * 1e6);
        cJSON_AddNumberToObject(o, "comm_us", ok[i]->comm_s * 1e6);
        cJSON_AddItemToObject(o, "paste",
                              paste_lines(t, &t->c[ok[i]->cand], ok[i]));
    }
    return r;
}

static void print_summary(const dl_tune_t *t, dl_tune_meas_t *ms, size_t n, const cJSON *rec)
{
    printf("# tune %s: %llu parameters in %zu tensors, %s; %s; backward %g ms\n", t->m.name,
           (unsigned long long)dl_model_params(&t->m), t->m.n, dl_dtype_names[t->m.t[0].dtype],
           t->horovod ? "horovod" : "ddp", t->o.backward_ms);
    printf("# %-12s %-32s %7s %10s %8s %10s %10s%s\n", "profile", "setting", "calls", "step_ms",
           "ci_ms", "comm_ms", "exposed_ms", t->o.curve ? "   curve_ms  error" : "");
    for (size_t i = 0; i < n; i++) {
        char s[64];
        dl_tune_setting_text(t, &t->c[ms[i].cand], s, sizeof(s));
        if (!ms[i].measured) {
            printf("  %-12s %-32s %7zu   (not measured: the profile ended first)\n", ms[i].profile,
                   s, t->c[ms[i].cand].bs.n);
            continue;
        }
        printf("  %-12s %-32s %7zu %10.3f %8.3f %10.3f %10.3f", ms[i].profile, s,
               t->c[ms[i].cand].bs.n, ms[i].step_s * 1e3, ms[i].step_ci_s * 1e3,
               ms[i].comm_s * 1e3, ms[i].exposed_s * 1e3);
        if (isfinite(ms[i].pred_s))
            printf(" %10.3f %+6.1f%%", ms[i].pred_s * 1e3,
                   100 * (ms[i].pred_s - ms[i].step_s) / ms[i].step_s);
        printf("\n");
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, "verdict");
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(rec, "settings");
    printf("# recommendation: %s\n", v->valuestring);
    int k = 0;
    for (const cJSON *o = set ? set->child : NULL; o; o = o->next, k++) {
        if (k)
            printf("# or (within the CIs):\n");
        printf("#   profile %s, exposed %.3f ms, communication %.3f ms:\n",
               cJSON_GetObjectItemCaseSensitive(o, "profile")->valuestring,
               num(o, "exposed_us") / 1e3, num(o, "comm_us") / 1e3);
        const cJSON *lines = cJSON_GetObjectItemCaseSensitive(o, "paste");
        for (const cJSON *l = lines->child; l; l = l->next)
            printf("%s\n", l->valuestring);
    }
}

/* The "tune" object: the model, the setting space, every candidate. */
static cJSON *tune_json(const dl_tune_t *t, dl_tune_meas_t *ms, size_t n)
{
    cJSON *tj = cJSON_CreateObject();
    cJSON_AddNumberToObject(tj, "schema", 1);
    cJSON *mj = cJSON_AddObjectToObject(tj, "model");
    cJSON_AddStringToObject(mj, "name", t->m.name);
    cJSON_AddNumberToObject(mj, "parameters", (double)dl_model_params(&t->m));
    cJSON_AddNumberToObject(mj, "tensors", (double)t->m.n);
    uint64_t bytes = 0;
    for (size_t i = 0; i < t->m.n; i++)
        bytes += dl_tensor_bytes(&t->m.t[i]);
    cJSON_AddNumberToObject(mj, "bytes", (double)bytes);
    cJSON_AddStringToObject(tj, "framework", t->horovod ? "horovod" : "ddp");
    cJSON_AddNumberToObject(tj, "backward_ms", t->o.backward_ms);
    cJSON_AddStringToObject(tj, "readiness", "element count, reverse parameter order");
    if (!t->horovod)
        cJSON_AddNumberToObject(tj, "first_bucket_mb", t->o.first_mb);
    if (t->o.curve)
        cJSON_AddStringToObject(tj, "curve", t->o.curve);
    cJSON *cj = cJSON_AddArrayToObject(tj, "candidates");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(cj, cand_json(t, &ms[i]));
    return tj;
}

/* --json: the run's header and tune's analysis. */
static dl_status_t write_json(const dl_tune_t *t, const cJSON *run, const cJSON *tj, const char *dir)
{
    cJSON *doc = cJSON_Duplicate(tj, 1);
    static const char *const keep[] = {"command", "started", "tool_version", "fingerprint",
                                       "options"};
    for (size_t k = 0; doc && k < DL_ARRAY_SIZE(keep); k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(run, keep[k]);
        if (v)
            cJSON_AddItemToObject(doc, keep[k], cJSON_Duplicate(v, 1));
    }
    char *text = doc ? cJSON_Print(doc) : NULL;
    dl_status_t st = text ? dl_write_atomic(t->o.json, text, strlen(text)) : DL_ERR_NOMEM;
    if (st != DL_OK)
        dl_err("--json %s: cannot write it", t->o.json);
    else if (!t->quiet)
        printf("# wrote %s and %s/run.json\n", t->o.json, dir);
    free(text);
    cJSON_Delete(doc);
    return st;
}

/* Rank 0, after the measurement, before the record's last write. */
dl_status_t dl_tune_answer(const dl_tune_t *t, dl_tune_meas_t *ms, size_t n, cJSON *run,
                           const char *dir, dl_status_t mst)
{
    dl_tune_meas_t **ok = calloc(n + 1, sizeof(*ok));
    size_t nok = 0;
    dl_record_t curve;
    dl_status_t st = ok ? DL_OK : DL_ERR_NOMEM;
    if (st == DL_OK && t->o.curve && (st = dl_an_load(t->o.curve, &curve)) == DL_OK) {
        predict(t, &curve, ms, n); /* checked before the run too */
        dl_record_free(&curve);
    }
    for (size_t i = 0; i < n; i++)
        if (ms[i].measured)
            ok[nok++] = &ms[i];
    cJSON *tj = tune_json(t, ms, n);
    cJSON *rec = recommend(t, ok, nok);
    cJSON_AddItemToObject(tj, "recommendation", rec);
    if (!t->quiet && n)
        print_summary(t, ms, n, rec);
    cJSON_AddNumberToObject(tj, "measurement_exit_code", dl_status_exit_code(mst));
    if (st == DL_OK && t->o.json)
        st = write_json(t, run, tj, dir);
    cJSON_AddItemToObject(run, "tune", tj);
    free(ok);
    return st;
}

/* --plan-only: the model and the buckets, for checks against the frameworks. */
int dl_tune_print_plan(const dl_tune_t *t)
{
    char *mtext = dl_model_to_json(&t->m);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, "model", mtext ? cJSON_Parse(mtext) : cJSON_CreateNull());
    free(mtext);
    cJSON_AddStringToObject(doc, "framework", t->horovod ? "horovod" : "ddp");
    if (!t->horovod)
        cJSON_AddNumberToObject(doc, "first_bucket_bytes", (double)(uint64_t)(t->o.first_mb * MIB));
    cJSON *cs = cJSON_AddArrayToObject(doc, "candidates");
    for (size_t i = 0; i < t->nc; i++) {
        const dl_tune_setting_t *c = &t->c[i];
        cJSON *o = cJSON_CreateObject(), *bs;
        cJSON_AddItemToArray(cs, o);
        if (t->horovod) {
            cJSON_AddNumberToObject(o, "fusion_threshold_bytes", (double)(uint64_t)(c->thr_mb * MIB));
            cJSON_AddNumberToObject(o, "cycle_time_ms", c->cycle_ms);
        } else
            cJSON_AddNumberToObject(o, "bucket_cap_mb", c->cap_mb);
        bs = cJSON_AddArrayToObject(o, "buckets");
        for (size_t k = 0; k < c->bs.n; k++) {
            cJSON *b = cJSON_CreateArray();
            cJSON_AddItemToArray(bs, b);
            for (size_t j = 0; j < c->bs.b[k].n; j++)
                cJSON_AddItemToArray(b, cJSON_CreateNumber((double)c->bs.b[k].idx[j]));
        }
    }
    char *text = cJSON_PrintUnformatted(doc);
    dl_status_t st = text ? DL_OK : DL_ERR_NOMEM;
    if (st == DL_OK && t->o.json)
        st = dl_write_atomic(t->o.json, text, strlen(text));
    else if (st == DL_OK)
        printf("%s\n", text);
    if (st != DL_OK)
        dl_err("--json %s: cannot write it", t->o.json ? t->o.json : "-");
    free(text);
    cJSON_Delete(doc);
    return dl_status_exit_code(st);
}

