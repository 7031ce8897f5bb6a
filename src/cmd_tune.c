/* dlcomm tune: a model's gradients, bucketed as DDP or Horovod would, each
 * candidate setting's step measured for real, the one with the least
 * exposed communication recommended. The measurement is sweep's (backend,
 * profiles, watchdog, checks, faults, run.json): tune hands it a step plan. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "commands.h"
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
    uint64_t *sizes;
    size_t nsizes;
    const char *argv0_line;
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
        n += t->c[i].bs.n + 1;
    t->sizes = st == DL_OK ? calloc(n, sizeof(uint64_t)) : NULL;
    if (st == DL_OK && !t->sizes)
        st = DL_ERR_NOMEM;
    for (size_t i = 0; st == DL_OK && i < t->nc; i++) {
        for (size_t k = 0; k < t->c[i].bs.n; k++)
            t->sizes[t->nsizes++] = DL_STEP_SIZE(t->c[i].bs.b[k].bytes, t->c[i].bs.b[k].dtype);
        t->sizes[t->nsizes++] = 0;
    }
    return st;
}

/* ---- after the measurement: timelines, prediction, recommendation ---- */

typedef struct {
    const char *profile;
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

static double time_field(const cJSON *row, const char *k)
{
    return num(cJSON_GetObjectItemCaseSensitive(row, "time_us"), k) * 1e-6;
}

/* A profile's rows, in plan order: each candidate's calls, then its step. */
static size_t read_profile(const tune_t *t, const cJSON *prof, meas_t *out)
{
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(prof, "results");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(prof, "name");
    const cJSON *r = cJSON_IsArray(rows) ? rows->child : NULL;
    for (size_t i = 0; i < t->nc; i++) {
        meas_t *m = &out[i];
        memset(m, 0, sizeof(*m));
        m->profile = cJSON_IsString(name) ? name->valuestring : "?";
        m->cand = i;
        m->pred_s = NAN;
        m->call_s = calloc(t->c[i].bs.n ? t->c[i].bs.n : 1, sizeof(double));
        size_t k = 0;
        for (; r && k < t->c[i].bs.n; k++, r = r->next)
            m->call_s[k] = time_field(r, "mean");
        if (!r || k < t->c[i].bs.n)
            continue; /* the profile ended before this step */
        m->measured = 1;
        m->step_s = time_field(r, "mean");
        m->step_ci_s = time_field(r, "ci95");
        const cJSON *cv = cJSON_GetObjectItemCaseSensitive(r, "converged");
        m->converged = cJSON_IsTrue(cv);
        r = r->next;
        dl_timeline_t tl;
        dl_timeline(&t->c[i].bs, m->call_s, t->backward_s, &tl);
        m->comm_s = tl.comm_s;
        m->exposed_s = tl.exposed_s;
        m->end_s = tl.end_s;
    }
    return t->nc;
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
static cJSON *paste_lines(const tune_t *t, const cand_t *c, const cJSON *prof)
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
    const cJSON *env = prof ? cJSON_GetObjectItemCaseSensitive(prof, "env") : NULL;
    for (const cJSON *e = env ? env->child : NULL; e; e = e->next)
        if (cJSON_IsString(e)) {
            snprintf(line, sizeof(line), "%s=%s", e->string, e->valuestring);
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

static const cJSON *profile_of(const cJSON *run, const char *name)
{
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(run, "profiles");
    for (const cJSON *p = ps ? ps->child : NULL; p; p = p->next) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            return p;
    }
    return NULL;
}

/* The recommendation: least exposed time; a winner only when its lead over
 * the next is beyond both CIs, else every setting within them, the least
 * communication first. */
static cJSON *recommend(const tune_t *t, const cJSON *run, meas_t **ok, size_t n)
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
                              paste_lines(t, &t->c[ok[i]->cand], profile_of(run, ok[i]->profile)));
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

static dl_status_t finish(void *arg, void *runp, const char *dir, dl_status_t mst)
{
    tune_t *t = arg;
    cJSON *run = runp;
    (void)dir;
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(run, "profiles");
    size_t np = (size_t)cJSON_GetArraySize(ps), n = 0, nok = 0;
    meas_t *ms = calloc(np * t->nc + 1, sizeof(*ms));
    meas_t **ok = calloc(np * t->nc + 1, sizeof(*ok));
    dl_record_t curve;
    int have_curve = 0;
    dl_status_t st = ms && ok ? DL_OK : DL_ERR_NOMEM;
    if (st == DL_OK && t->o.curve) {
        st = dl_an_load(t->o.curve, &curve); /* checked before the run too */
        have_curve = st == DL_OK;
    }
    for (const cJSON *p = ps ? ps->child : NULL; st == DL_OK && p; p = p->next) {
        const cJSON *pst = cJSON_GetObjectItemCaseSensitive(p, "status");
        if (cJSON_IsString(pst) && strcmp(pst->valuestring, "skipped") == 0)
            continue;
        n += read_profile(t, p, ms + n);
    }
    if (have_curve)
        predict(t, &curve, ms, n);
    for (size_t i = 0; i < n; i++)
        if (ms[i].measured)
            ok[nok++] = &ms[i];
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
    cJSON *rec = recommend(t, run, ok, nok);
    cJSON_AddItemToObject(tj, "recommendation", rec);
    if (!t->quiet && n)
        print_summary(t, ms, n, rec);
    cJSON_AddNumberToObject(tj, "measurement_exit_code", dl_status_exit_code(mst));
    if (st == DL_OK && t->o.json) { /* the tune record: the run's header and the analysis */
        cJSON *doc = cJSON_Duplicate(tj, 1);
        static const char *const keep[] = {"command", "started", "tool_version", "fingerprint",
                                           "options"};
        for (size_t k = 0; doc && k < DL_ARRAY_SIZE(keep); k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(run, keep[k]);
            if (v)
                cJSON_AddItemToObject(doc, keep[k], cJSON_Duplicate(v, 1));
        }
        char *text = doc ? cJSON_Print(doc) : NULL;
        st = text ? dl_write_atomic(t->o.json, text, strlen(text)) : DL_ERR_NOMEM;
        if (st != DL_OK)
            dl_err("--json %s: cannot write it", t->o.json);
        else if (!t->quiet)
            printf("# wrote %s and %s/run.json\n", t->o.json, dir);
        free(text);
        cJSON_Delete(doc);
    }
    cJSON_AddItemToObject(run, "tune", tj);
    for (size_t i = 0; i < np * t->nc; i++)
        free(ms[i].call_s);
    free(ms);
    free(ok);
    if (have_curve)
        dl_record_free(&curve);
    return st;
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
        if (dl_an_load(o->curve, &r) != DL_OK)
            return DL_ERR_INPUT;
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
    free(t->sizes);
    free(t->ready);
    dl_model_free(&t->m);
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
    else if (st == DL_OK) {
        dl_sweep_hook_t hook = {.command = "dlcomm tune", .usage = usage, .sizes = t.sizes,
                                .nsizes = t.nsizes, .places = 2, .finish = finish, .arg = &t};
        code = dl_sweep_main(ntheirs, theirs, &hook);
    }
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
