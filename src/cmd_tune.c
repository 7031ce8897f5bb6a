/* dlcomm tune: a model's gradients, bucketed as DDP or Horovod would, each
 * candidate setting's step measured for real, the one with the least
 * exposed communication recommended. The measurement is a job (src/job/:
 * backend, profiles, watchdog, checks, faults, run.json) running tune's
 * step plan, its rows collected by tune's sink over the run record's. */
#include <cjson/cJSON.h>
#include <math.h>
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "commands.h"
#include "job/job.h"
#include "results/results.h"
#include "measure/measure.h"
#include "sys/launcher.h"
#include "tune/tune.h"

#define MIB (1024.0 * 1024.0)

typedef struct {
    const char *model, *framework, *dtype, *caps, *thresholds, *cycles, *json, *curve;
    double backward_ms, first_mb;
    int plan_only;
} tune_opts_t;

static const char *const framework_names[] = {"ddp", "horovod"};
static const dl_choices_t frameworks = {.noun = "framework", .names = framework_names, .n = 2};
/* A gradient's dtype: the floating types a framework trains in. */
static const char *const grad_dtype_names[] = {"float32", "float16", "bfloat16"};
static const char *const grad_dtype_aliases[] = {"float", "float32", "half", "float16", NULL};
static const dl_choices_t grad_dtypes = {.noun = "dtype", .names = grad_dtype_names, .n = 3,
                                         .aliases = grad_dtype_aliases};

#define O(f) offsetof(tune_opts_t, f)
static const dl_opt_t tune_opts[] = {
    {"model", 'm', DL_OPT_STR, "resnet50", "NAME|FILE",
     "resnet50, bert-large, gpt2, llama2-7b, or a model file (scripts/model-gradients.py)",
     O(model), NULL},
    {"framework", 0, DL_OPT_STR, "ddp", "NAME",
     "whose bucketing: PyTorch DistributedDataParallel's or Horovod's", O(framework), NULL,
     &frameworks},
    {"dtype", 'd', DL_OPT_STR, "float32", "TYPE",
     "gradient dtype (a model file's own dtypes win)", O(dtype), NULL, &grad_dtypes},
    {"backward-ms", 0, DL_OPT_DOUBLE, "100", "MS",
     "the backward pass's length; gradients become ready over it in proportion to their "
     "element counts", O(backward_ms), dl_opt_positive},
    {"bucket-caps", 0, DL_OPT_STR, "1,5,10,25,50,100", "LIST",
     "ddp: bucket_cap_mb candidates (MiB)", O(caps), NULL},
    {"first-bucket-mb", 0, DL_OPT_DOUBLE, "1", "MB", "ddp: the first bucket's cap (DDP's default 1 MiB)",
     O(first_mb), dl_opt_positive},
    {"fusion-thresholds", 0, DL_OPT_STR, "1,8,32,64,128", "LIST",
     "horovod: HOROVOD_FUSION_THRESHOLD candidates (MiB; 0 = no fusion)", O(thresholds), NULL},
    {"cycle-times", 0, DL_OPT_STR, "1,5", "LIST", "horovod: HOROVOD_CYCLE_TIME candidates (ms)",
     O(cycles), NULL},
    {"json", 0, DL_OPT_STR, NULL, "FILE", "every candidate and the recommendation as JSON",
     O(json), NULL},
    {"curve", 0, DL_OPT_STR, NULL, "RUN",
     "a sweep's run.json: predict each step from its all-reduce curve, beside the measurement",
     O(curve), NULL},
    {"plan-only", 0, DL_OPT_FLAG, "0", NULL,
     "measure nothing: print the model and each candidate's buckets (tensor indices) as JSON",
     O(plan_only), NULL},
};
DL_OPTS_EXPORT("tune", tune_opts, tune_opts_t)
#undef O

static const char usage[] =
    "usage: mpirun -np N dlcomm tune [options] [measurement options]\n\n"
    "Buckets a model's gradients as the framework does (DDP: reverse parameter order,\n"
    "a 1 MiB first bucket then bucket_cap_mb; Horovod: what is ready in a cycle, fused up\n"
    "to the threshold, per dtype), measures each candidate's training step for real\n"
    "(its all-reduces back to back, repeated until the step time's 95% CI is within\n"
    "--ci-target), places the measured calls against the gradients' ready times and\n"
    "recommends the setting with the least exposed communication (past the end of the\n"
    "backward pass). Measurement options are sweep's: --backend, -p, --out, --timeout,\n"
    "--ci-target, --budget (default 2 s per step here), --min-iters, --max-iters,\n"
    "-w (default 2 steps), -n, --check, -q and the backends' own (dlcomm sweep --help).";

/* Sweep options that have no meaning for a step plan (-G: a step is one
 * call of each size, not a graph of many). */
static const char *const not_for_tune[] = {"--collectives", "-c", "--minbytes", "-b", "--maxbytes",
                                           "-e", "--stepfactor", "-f", "--stepbytes", "-i",
                                           "--datatype", "--op", "-o", "--root", "-r",
                                           "--placement", "--plot", "--prometheus", "--graph",
                                           "-G"};

typedef struct {
    double cap_mb, thr_mb, cycle_ms; /* the setting (ddp: cap_mb; horovod: thr_mb, cycle_ms) */
    dl_buckets_t bs;
} cand_t;

typedef struct {
    tune_opts_t o;
    int horovod, quiet;
    dl_model_t m;
    double *ready, backward_s;
    cand_t *c;
    size_t nc;
    dl_step_t *steps; /* the plan: candidate i's buckets are step i */
    dl_call_t *calls;
} tune_t;

static dl_status_t parse_list(const char *opt, const char *s, int zero_ok, double **out,
                              size_t *n)
{
    *n = 0;
    *out = calloc(strlen(s) + 1, sizeof(double));
    if (!*out)
        return DL_ERR_NOMEM;
    const char *p = s;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || (*end && *end != ',') || !(zero_ok ? v >= 0 : v > 0) || !isfinite(v)) {
            dl_err("--%s: '%s' is not a list of numbers %s", opt, s, zero_ok ? ">= 0" : "> 0");
            free(*out);
            *out = NULL; /* the caller frees what it holds: never twice */
            return DL_ERR_USAGE;
        }
        (*out)[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    if (!*n) {
        dl_err("--%s: an empty list", opt);
        free(*out);
        *out = NULL;
        return DL_ERR_USAGE;
    }
    return DL_OK;
}

static cand_t *cand_new(tune_t *t)
{
    cand_t *c = realloc(t->c, (t->nc + 1) * sizeof(*c));
    if (!c)
        return NULL;
    t->c = c;
    memset(&c[t->nc], 0, sizeof(*c));
    return &c[t->nc++];
}

/* The candidates, their buckets, and the step plan (each step's calls, then 0). */
static dl_status_t build(tune_t *t)
{
    double *a = NULL, *b = NULL, *other = NULL;
    size_t na = 0, nb = 0, nother = 0;
    /* Every list is checked, the other framework's too: a typo in one is
     * bad input, never silently unused. */
    dl_status_t st = parse_list("fusion-thresholds", t->o.thresholds, 1, t->horovod ? &a : &other,
                                t->horovod ? &na : &nother);
    if (st == DL_OK)
        st = parse_list("bucket-caps", t->o.caps, 0, t->horovod ? &other : &a,
                        t->horovod ? &nother : &na);
    if (st == DL_OK)
        st = parse_list("cycle-times", t->o.cycles, 0, &b, &nb);
    free(other);
    for (size_t i = 0; st == DL_OK && i < na; i++)
        for (size_t j = 0; st == DL_OK && j < (t->horovod ? nb : 1); j++) {
            cand_t *c = cand_new(t);
            if (!c) {
                st = DL_ERR_NOMEM;
                break;
            }
            if (t->horovod) {
                c->thr_mb = a[i];
                c->cycle_ms = b[j];
                st = dl_bucket_horovod(&t->m, (uint64_t)(a[i] * MIB), b[j] / 1e3, t->ready, &c->bs);
            } else {
                c->cap_mb = a[i];
                const uint64_t lim[2] = {(uint64_t)(t->o.first_mb * MIB), (uint64_t)(a[i] * MIB)};
                st = dl_bucket_ddp(&t->m, lim, 2, t->ready, &c->bs);
            }
        }
    free(a);
    free(b);
    size_t n = 0;
    for (size_t i = 0; i < t->nc; i++)
        n += t->c[i].bs.n;
    t->steps = st == DL_OK ? calloc(t->nc + 1, sizeof(dl_step_t)) : NULL;
    t->calls = st == DL_OK ? calloc(n + 1, sizeof(dl_call_t)) : NULL;
    if (st == DL_OK && (!t->steps || !t->calls))
        st = DL_ERR_NOMEM;
    for (size_t i = 0, k = 0; st == DL_OK && i < t->nc; i++) {
        t->steps[i] = (dl_step_t){.calls = t->calls + k, .ncalls = t->c[i].bs.n};
        for (size_t b = 0; b < t->c[i].bs.n; b++)
            t->calls[k++] = (dl_call_t){.bytes = t->c[i].bs.b[b].bytes,
                                        .dtype = t->c[i].bs.b[b].dtype};
    }
    return st;
}

/* ---- after the measurement: timelines, prediction, recommendation ---- */

typedef struct {
    const char *profile;
    const dl_profile_t *prof; /* its settings (NULL: the backend's implicit one) */
    size_t cand;
    int measured;
    double step_s, step_ci_s, comm_s, exposed_s, end_s, pred_s;
    int converged;
    double *call_s;
} meas_t;

static double num(const cJSON *o, const char *k)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(j) ? j->valuedouble : NAN;
}

/* The measured rows, kept by the plan's step and call indices (rank 0):
 * a profile that ran adds one entry per candidate. */
typedef struct {
    tune_t *t;
    dl_sink_t inner; /* the run record's */
    dl_run_sink_t *rs;
    meas_t *ms;
    size_t n, cap, base; /* entries; the running profile's first */
    int running;
} tune_sink_t;

static dl_status_t profile_entries(tune_sink_t *k, const char *name, const dl_profile_t *p)
{
    const tune_t *t = k->t;
    if (k->n + t->nc > k->cap) {
        size_t cap = (k->n + t->nc) * 2;
        meas_t *ms = realloc(k->ms, cap * sizeof(*ms));
        if (!ms)
            return DL_ERR_NOMEM;
        k->ms = ms;
        k->cap = cap;
    }
    k->base = k->n;
    for (size_t i = 0; i < t->nc; i++, k->n++) {
        meas_t *m = &k->ms[k->n];
        memset(m, 0, sizeof(*m));
        m->profile = name;
        m->prof = p;
        m->cand = i;
        m->pred_s = NAN;
        m->call_s = calloc(t->c[i].bs.n ? t->c[i].bs.n : 1, sizeof(double));
        if (!m->call_s)
            return DL_ERR_NOMEM;
    }
    return DL_OK;
}

static void row_in(tune_sink_t *k, const dl_result_t *r)
{
    const tune_t *t = k->t;
    if (!k->running || r->step < 0 || (size_t)r->step >= t->nc)
        return;
    meas_t *m = &k->ms[k->base + (size_t)r->step];
    const dl_buckets_t *bs = &t->c[r->step].bs;
    if (r->call >= 0 && (size_t)r->call < bs->n) {
        m->call_s[r->call] = r->t.mean;
        return;
    }
    m->measured = 1;
    m->step_s = r->t.mean;
    m->step_ci_s = r->t.ci95;
    m->converged = r->converged;
    dl_timeline_t tl;
    dl_timeline(bs, m->call_s, t->backward_s, &tl);
    m->comm_s = tl.comm_s;
    m->exposed_s = tl.exposed_s;
    m->end_s = tl.end_s;
}

/* The curve's time for each fused size, summed: what a sweep alone predicts. */
static void predict(const tune_t *t, const dl_record_t *curve, meas_t *ms, size_t n)
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

static void setting(const tune_t *t, const cand_t *c, char *buf, size_t len)
{
    if (t->horovod)
        snprintf(buf, len, "threshold %g MiB, cycle %g ms", c->thr_mb, c->cycle_ms);
    else
        snprintf(buf, len, "bucket_cap_mb %g", c->cap_mb);
}

/* The lines a user pastes for candidate c (and its profile's settings). */
static cJSON *paste_lines(const tune_t *t, const cand_t *c, const dl_profile_t *prof)
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
    for (int i = 0; prof && i < prof->nenv; i++) {
        const char *eq = strchr(prof->env[i], '=');
        snprintf(line, sizeof(line), "%.*s", (int)(eq - prof->env[i]), prof->env[i]);
        if (dl_env_credential_like(line)) /* the record's rule for a profile's env */
            continue;
        snprintf(line, sizeof(line), "%s", prof->env[i]);
        cJSON_AddItemToArray(a, cJSON_CreateString(line));
    }
    return a;
}

static int by_exposed(const void *x, const void *y)
{
    const meas_t *a = *(meas_t *const *)x, *b = *(meas_t *const *)y;
    if (a->exposed_s != b->exposed_s)
        return a->exposed_s < b->exposed_s ? -1 : 1;
    return (a->comm_s > b->comm_s) - (a->comm_s < b->comm_s);
}

static int by_comm(const void *x, const void *y)
{
    const meas_t *a = *(meas_t *const *)x, *b = *(meas_t *const *)y;
    return (a->comm_s > b->comm_s) - (a->comm_s < b->comm_s);
}

static cJSON *cand_json(const tune_t *t, const meas_t *m)
{
    const cand_t *c = &t->c[m->cand];
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
static cJSON *recommend(const tune_t *t, meas_t **ok, size_t n)
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
                              paste_lines(t, &t->c[ok[i]->cand], ok[i]->prof));
    }
    return r;
}

static void print_summary(const tune_t *t, meas_t *ms, size_t n, const cJSON *rec)
{
    printf("# tune %s: %llu parameters in %zu tensors, %s; %s; backward %g ms\n", t->m.name,
           (unsigned long long)dl_model_params(&t->m), t->m.n, dl_dtype_names[t->m.t[0].dtype],
           t->horovod ? "horovod" : "ddp", t->o.backward_ms);
    printf("# %-12s %-32s %7s %10s %8s %10s %10s%s\n", "profile", "setting", "calls", "step_ms",
           "ci_ms", "comm_ms", "exposed_ms", t->o.curve ? "   curve_ms  error" : "");
    for (size_t i = 0; i < n; i++) {
        char s[64];
        setting(t, &t->c[ms[i].cand], s, sizeof(s));
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
static cJSON *tune_json(const tune_t *t, meas_t *ms, size_t n)
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
static dl_status_t write_json(const tune_t *t, const cJSON *run, const cJSON *tj, const char *dir)
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

/* Rank 0, after the measurement, before the record's last write: the
 * prediction, the recommendation, the summary and the files. */
static dl_status_t finish(tune_sink_t *k, cJSON *run, const char *dir, dl_status_t mst)
{
    const tune_t *t = k->t;
    meas_t **ok = calloc(k->n + 1, sizeof(*ok));
    size_t nok = 0;
    dl_record_t curve;
    dl_status_t st = ok ? DL_OK : DL_ERR_NOMEM;
    if (st == DL_OK && t->o.curve && (st = dl_an_load(t->o.curve, &curve)) == DL_OK) {
        predict(t, &curve, k->ms, k->n); /* checked before the run too */
        dl_record_free(&curve);
    }
    for (size_t i = 0; i < k->n; i++)
        if (k->ms[i].measured)
            ok[nok++] = &k->ms[i];
    cJSON *tj = tune_json(t, k->ms, k->n);
    cJSON *rec = recommend(t, ok, nok);
    cJSON_AddItemToObject(tj, "recommendation", rec);
    if (!t->quiet && k->n)
        print_summary(t, k->ms, k->n, rec);
    cJSON_AddNumberToObject(tj, "measurement_exit_code", dl_status_exit_code(mst));
    if (st == DL_OK && t->o.json)
        st = write_json(t, run, tj, dir);
    cJSON_AddItemToObject(run, "tune", tj);
    free(ok);
    return st;
}

/* ---- the sink: the run record's, with tune's rows kept aside ---- */

static dl_status_t ts_begin(void *arg, dl_job_t *j)
{
    tune_sink_t *k = arg;
    return k->inner.begin(k->inner.arg, j);
}

static cJSON *ts_profile(void *arg, const dl_job_t *j, const dl_profile_t *p, const char *label,
                         const char *skip)
{
    tune_sink_t *k = arg;
    k->running = !skip && profile_entries(k, p ? p->name : j->be->name, p) == DL_OK;
    return k->inner.profile(k->inner.arg, j, p, label, skip);
}

static dl_status_t ts_result(void *arg, dl_result_t *r)
{
    tune_sink_t *k = arg;
    dl_status_t st = k->inner.result(k->inner.arg, r);
    row_in(k, r); /* rank 0's: no profile runs elsewhere */
    return st;
}

static void ts_profile_end(void *arg, const dl_job_t *j, dl_rec_status_t status,
                           const char *reason)
{
    tune_sink_t *k = arg;
    k->inner.profile_end(k->inner.arg, j, status, reason);
}

static void ts_interrupted(void *arg, const dl_job_t *j, int sig)
{
    tune_sink_t *k = arg;
    k->inner.interrupted(k->inner.arg, j, sig);
}

static dl_status_t ts_end(void *arg, dl_job_t *j, dl_status_t st)
{
    tune_sink_t *k = arg;
    st = dl_status_worse(st, finish(k, dl_run_sink_record(k->rs), j->dir, st));
    return k->inner.end(k->inner.arg, j, st);
}

static void tune_sink_free(tune_sink_t *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->ms[i].call_s);
    free(k->ms);
    dl_run_sink_free(k->rs);
}

/* ---- the command line: tune's own options, the rest for the measurement ---- */

static const dl_opt_t *own_opt(const char *a, int *inline_value)
{
    *inline_value = 0;
    for (size_t i = 0; i < DL_ARRAY_SIZE(tune_opts); i++) {
        const dl_opt_t *o = &tune_opts[i];
        size_t l = strlen(o->longname);
        if (a[0] == '-' && a[1] == '-' && strncmp(a + 2, o->longname, l) == 0 &&
            (a[2 + l] == '\0' || a[2 + l] == '=')) {
            *inline_value = a[2 + l] == '=';
            return o;
        }
        if (o->shortname && a[0] == '-' && a[1] == o->shortname && a[2] == '\0')
            return o;
    }
    return NULL;
}

/* Splits argv: tune's options to mine[], the rest to theirs[] after the
 * step plan's defaults. Refuses sweep's size and collective options. */
static dl_status_t split_args(int argc, char **argv, char **mine, int *nmine, char **theirs,
                              int *ntheirs, int *help, int *quiet)
{
    static char *defaults[] = {"--budget", "2", "-w", "2", "-q"};
    *nmine = 1;
    *ntheirs = 0;
    mine[0] = theirs[(*ntheirs)++] = argv[0];
    for (size_t i = 0; i < DL_ARRAY_SIZE(defaults); i++)
        theirs[(*ntheirs)++] = defaults[i];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int inl;
        const dl_opt_t *o = own_opt(a, &inl);
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            *help = 1;
        else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
            *quiet = 1;
        else if (o) {
            mine[(*nmine)++] = argv[i];
            if (!inl && o->kind != DL_OPT_FLAG && i + 1 < argc)
                mine[(*nmine)++] = argv[++i];
        } else {
            for (size_t k = 0; k < DL_ARRAY_SIZE(not_for_tune); k++) {
                size_t l = strlen(not_for_tune[k]);
                if (strncmp(a, not_for_tune[k], l) == 0 && (a[l] == '\0' || a[l] == '=')) {
                    dl_err("%s is a sweep option; tune's sizes come from the model (see "
                           "dlcomm tune --help)", not_for_tune[k]);
                    return DL_ERR_USAGE;
                }
            }
            theirs[(*ntheirs)++] = argv[i];
        }
    }
    return DL_OK;
}

static dl_status_t prepare(tune_t *t)
{
    const tune_opts_t *o = &t->o;
    dl_dtype_t dt = DL_DT_FLOAT32;
    if (strcmp(o->dtype, "float32") == 0)
        dt = DL_DT_FLOAT32;
    else if (strcmp(o->dtype, "float16") == 0)
        dt = DL_DT_FLOAT16;
    else if (strcmp(o->dtype, "bfloat16") == 0)
        dt = DL_DT_BFLOAT16;
    else {
        dl_err("--dtype must be float32, float16 or bfloat16, not '%s'", o->dtype);
        return DL_ERR_USAGE;
    }
    if (strcmp(o->framework, "ddp") && strcmp(o->framework, "horovod")) {
        dl_err("--framework must be ddp or horovod, not '%s'", o->framework);
        return DL_ERR_USAGE;
    }
    t->horovod = strcmp(o->framework, "horovod") == 0;
    t->backward_s = o->backward_ms / 1e3;
    if (o->curve) { /* a bad curve is bad input, found before anything runs */
        dl_record_t r;
        dl_status_t lst = dl_an_load(o->curve, &r); /* no memory: 3, not 2 */
        if (lst != DL_OK)
            return lst == DL_ERR_NOMEM ? lst : DL_ERR_INPUT;
        dl_curve_t cv;
        dl_status_t st = dl_curve_get(&r, r.nprofs ? r.profs[0].name : "", "allreduce", &cv);
        if (st == DL_OK)
            dl_curve_free(&cv);
        dl_record_free(&r);
        if (st != DL_OK) {
            dl_err("--curve %s: no all-reduce rows to predict from", o->curve);
            return DL_ERR_INPUT;
        }
    }
    dl_status_t st = dl_model_load(o->model, dt, &t->m);
    if (st != DL_OK)
        return st;
    t->ready = calloc(t->m.n, sizeof(double));
    if (!t->ready)
        return DL_ERR_NOMEM;
    dl_ready_times(&t->m, t->backward_s, t->ready);
    return build(t);
}

/* --plan-only: the model and the buckets, for checks against the frameworks. */
static int print_plan(const tune_t *t)
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
        const cand_t *c = &t->c[i];
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

static void tune_free(tune_t *t)
{
    for (size_t i = 0; i < t->nc; i++)
        dl_buckets_free(&t->c[i].bs);
    free(t->c);
    free(t->steps);
    free(t->calls);
    free(t->ready);
    dl_model_free(&t->m);
}

/* The measurement's options: the job's rows and every backend's. */
typedef struct {
    dl_job_opts_t m;
    const char *html; /* the run's page, tune's answer in it */
} meas_opts_t;
static const dl_opt_t meas_opts[] = {
    DL_JOB_TIMING_ROWS(meas_opts_t, m),
    DL_JOB_RUN_ROWS(meas_opts_t, m),
    {"html", 0, DL_OPT_STR, NULL, "FILE", "write the report's HTML page of the run at the end",
     offsetof(meas_opts_t, html), NULL},
};

/* The step plan from the candidates and the measurement's options. */
static dl_status_t meas_parse(tune_t *t, dl_optset_t *set, int argc, char **argv, dl_plan_t *plan,
                              dl_inject_t *inj)
{
    const meas_opts_t *mo = set->target;
    int help = 0;
    dl_status_t st = dl_opts_parse(set->opts, set->n, set->target, argc - 1, argv + 1, NULL, 0,
                                   NULL, &help);
    memset(plan, 0, sizeof(*plan));
    plan->kind = DL_PLAN_STEPS;
    plan->places = 2; /* in place, as the frameworks reduce gradients */
    plan->steps.v = t->steps;
    plan->steps.n = t->nc;
    plan->mo.arrivals = 1;
    if (st == DL_OK)
        st = dl_job_timing(&mo->m, &plan->mo);
    if (st == DL_OK)
        st = dl_inject_parse(getenv("DLCOMM_INJECT"), inj);
    if (st == DL_OK && dl_launcher_is_rank0()) /* rank 0 writes: its host decides */
        st = dl_an_sweep_check(0, NULL, mo->html, mo->m.out);
    if (st == DL_OK && dl_launcher_is_rank0() && mo->html)
        st = dl_an_html_check("--html", mo->html);
    return st;
}

/* The measurement: a job running the step plan into tune's sink. */
static int measure(tune_t *t, dl_optset_t *set, dl_plan_t *plan, const dl_inject_t *inj,
                   int argc, char **argv)
{
    const meas_opts_t *mo = set->target;
    dl_job_cfg_t jc = {.command = "dlcomm tune", .o = &mo->m, .set = set, .inject = inj,
                       .plan = plan, .argc = argc - 1, .argv = argv + 1};
    dl_job_t job;
    int code = dl_job_open(&jc, &job);
    if (code != 0)
        return code;
    tune_sink_t k = {.t = t};
    dl_run_sink_cfg_t rc = {.quiet = mo->m.quiet, .html = mo->html};
    dl_status_t st = dl_run_sink_new(&rc, &k.rs, &k.inner);
    dl_sink_t sink = {.arg = &k, .begin = ts_begin, .profile = ts_profile, .result = ts_result,
                      .profile_end = ts_profile_end, .interrupted = ts_interrupted, .end = ts_end};
    if (st == DL_OK)
        st = dl_job_run(&job, plan, &sink);
    code = dl_job_close(&job, st, &sink);
    tune_sink_free(&k);
    return code;
}

static int run_measured(tune_t *t, int argc, char **argv)
{
    dl_optset_t set;
    dl_plan_t plan;
    dl_inject_t inj;
    if (dl_backend_optset(&set, meas_opts, DL_ARRAY_SIZE(meas_opts), sizeof(meas_opts_t)) != DL_OK)
        return 3;
    dl_log_set_mute(!dl_launcher_is_rank0());
    dl_status_t st = meas_parse(t, &set, argc, argv, &plan, &inj);
    dl_log_set_mute(0);
    int code = dl_status_exit_code(st);
    if (st == DL_OK) {
        dl_log_set_quiet(((const meas_opts_t *)set.target)->m.quiet);
        /* SINGLE, as sweep: any higher level turns Open MPI 4.1's internal locking on. */
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
        code = measure(t, &set, &plan, &inj, argc, argv);
        MPI_Finalize();
    }
    dl_optset_free(&set);
    return code;
}

static int tune_main(int argc, char **argv)
{
    tune_t t;
    memset(&t, 0, sizeof(t));
    char **mine = calloc((size_t)argc + 8, sizeof(char *));
    char **theirs = calloc((size_t)argc + 8, sizeof(char *));
    int nmine = 0, ntheirs = 0, help = 0;
    if (!mine || !theirs) {
        free(mine);
        free(theirs);
        return 3;
    }
    dl_log_set_mute(!dl_launcher_is_rank0()); /* every rank finds the same mistake; rank 0 says it */
    dl_status_t st = split_args(argc, argv, mine, &nmine, theirs, &ntheirs, &help, &t.quiet);
    if (st == DL_OK) {
        int h = 0;
        st = dl_opts_parse(tune_opts, DL_ARRAY_SIZE(tune_opts), &t.o, nmine - 1, mine + 1, NULL,
                           0, NULL, &h);
    }
    if (help) {
        dl_log_set_mute(0);
        dl_opts_help(stdout, usage, tune_opts, DL_ARRAY_SIZE(tune_opts));
        free(mine);
        free(theirs);
        return 0;
    }
    if (st == DL_OK && t.o.json && dl_launcher_is_rank0())
        st = dl_out_file_check("--json", t.o.json) == DL_OK ? DL_OK : DL_ERR_USAGE;
    if (st == DL_OK)
        st = prepare(&t);
    dl_log_set_mute(0);
    int code = dl_status_exit_code(st);
    if (st == DL_OK && t.o.plan_only)
        code = print_plan(&t);
    else if (st == DL_OK)
        code = run_measured(&t, ntheirs, theirs);
    tune_free(&t);
    free(mine);
    free(theirs);
    return code;
}

int cmd_tune(int argc, char **argv)
{
    /* A measured tune is recorded in run.json (its "tune"); a plan is only
     * printed. */
    int plan = 0;
    for (int i = 1; i < argc; i++)
        plan |= strcmp(argv[i], "--plan-only") == 0;
    return dl_stdio_run(tune_main, argc, argv, !plan);
}
