/* dlcomm tune: a model's gradients, bucketed as DDP or Horovod would, each
 * candidate setting's step measured for real, the one with the least
 * exposed communication recommended. The setting space and the answer are
 * src/tune/'s; here: tune's command line (its rows, the job's and every
 * backend's, sweep's other rows refused), the step plan, and the job
 * running it into tune's sink over the run record's. */
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
#include "sys/mpistart.h"
#include "sys/launcher.h"
#include "tune/tune.h"

/* One command line: tune's settings, then how each step is measured. */
typedef struct {
    dl_tune_opts_t t;
    dl_job_opts_t m;
    const char *html; /* the run's page, tune's answer in it */
} tune_cli_t;

static const char *const framework_names[] = {"ddp", "horovod"};
static const dl_choices_t frameworks = {.noun = "framework", .names = framework_names, .n = 2};
/* A gradient's dtype: the floating types a framework trains in. */
static const char *const grad_dtype_names[] = {"float32", "float16", "bfloat16"};
static const char *const grad_dtype_aliases[] = {"float", "float32", "half", "float16", NULL};
static const dl_choices_t grad_dtypes = {.noun = "dtype", .names = grad_dtype_names, .n = 3,
                                         .aliases = grad_dtype_aliases};


#define O(f) offsetof(tune_cli_t, t.f)
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
    /* The measurement: sweep's rows, with a step's defaults (many calls long). */
    DL_JOB_TIMING_ROWS_AT(tune_cli_t, m, "2", "2"),
    DL_JOB_RUN_ROWS(tune_cli_t, m),
    {"html", 0, DL_OPT_STR, NULL, "FILE", "write the report's HTML page of the run at the end",
     offsetof(tune_cli_t, html), NULL},
};
DL_OPTS_EXPORT("tune", tune_opts, tune_cli_t)
#undef O

static const char usage[] =
    "usage: mpirun -np N dlcomm tune [options]\n\n"
    "Buckets a model's gradients as the framework does (DDP: reverse parameter order,\n"
    "a 1 MiB first bucket then bucket_cap_mb; Horovod: what is ready in a cycle, fused up\n"
    "to the threshold, per dtype), measures each candidate's training step for real\n"
    "(its all-reduces back to back, repeated until the step time's 95% CI is within\n"
    "--ci-target), places the measured calls against the gradients' ready times and\n"
    "recommends the setting with the least exposed communication (past the end of the\n"
    "backward pass). The measurement's options are sweep's, a step's warm-up and budget\n"
    "longer, and the backends' own (below; dlcomm sweep --help); its size and collective\n"
    "options are refused: the model gives those.";

/* What a sweep option on tune's line says: tune holds it only to refuse it. */
static const char sweep_only[] =
    "a sweep option; tune's sizes come from the model (see dlcomm tune --help)";
/* A backend's row that has no meaning for a step plan. */
static const char not_a_step[] =
    "a sweep option; a step is one call of each bucket, not a graph of many";

/* The step plan: candidate i's buckets are step i, in place, as the
 * frameworks reduce gradients. */
typedef struct {
    dl_step_t *steps;
    dl_call_t *calls;
} steps_t;

static dl_status_t step_plan(const dl_tune_t *t, const tune_cli_t *o, steps_t *sp, dl_plan_t *plan)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nc; i++)
        n += t->c[i].bs.n;
    sp->steps = calloc(t->nc + 1, sizeof(dl_step_t));
    sp->calls = calloc(n + 1, sizeof(dl_call_t));
    if (!sp->steps || !sp->calls)
        return DL_ERR_NOMEM;
    for (size_t i = 0, k = 0; i < t->nc; i++) {
        sp->steps[i] = (dl_step_t){.calls = sp->calls + k, .ncalls = t->c[i].bs.n};
        for (size_t b = 0; b < t->c[i].bs.n; b++)
            sp->calls[k++] = (dl_call_t){.bytes = t->c[i].bs.b[b].bytes,
                                         .dtype = t->c[i].bs.b[b].dtype};
    }
    memset(plan, 0, sizeof(*plan));
    plan->kind = DL_PLAN_STEPS;
    plan->places = 2;
    plan->steps.v = sp->steps;
    plan->steps.n = t->nc;
    plan->mo.arrivals = 1;
    return dl_job_timing(&o->m, &plan->mo);
}

/* ---- the sink: the run record's, with tune's rows kept aside ---- */

/* The measured rows, kept by the plan's step and call indices (rank 0):
 * a profile that ran adds one entry per candidate. */
typedef struct {
    const dl_tune_t *t;
    dl_sink_t inner; /* the run record's */
    dl_run_sink_t *rs;
    dl_tune_meas_t *ms;
    size_t n, cap, base; /* entries; the running profile's first */
    int running;
} tune_sink_t;

static dl_status_t profile_entries(tune_sink_t *k, const char *name, const dl_profile_t *p)
{
    const dl_tune_t *t = k->t;
    if (k->n + t->nc > k->cap) {
        size_t cap = (k->n + t->nc) * 2;
        dl_tune_meas_t *ms = realloc(k->ms, cap * sizeof(*ms));
        if (!ms)
            return DL_ERR_NOMEM;
        k->ms = ms;
        k->cap = cap;
    }
    k->base = k->n;
    for (size_t i = 0; i < t->nc; i++, k->n++) {
        dl_tune_meas_t *m = &k->ms[k->n];
        memset(m, 0, sizeof(*m));
        m->profile = name;
        m->env = p ? p->env : NULL;
        m->nenv = p ? p->nenv : 0;
        m->cand = i;
        m->pred_s = NAN;
        m->call_s = calloc(t->c[i].bs.n ? t->c[i].bs.n : 1, sizeof(double));
        if (!m->call_s)
            return DL_ERR_NOMEM;
    }
    return DL_OK;
}

/* A row is one bucket's call (its call index) or the whole step. */
static void row_in(tune_sink_t *k, const dl_result_t *r)
{
    const dl_tune_t *t = k->t;
    if (!k->running || r->step < 0 || (size_t)r->step >= t->nc)
        return;
    dl_tune_meas_t *m = &k->ms[k->base + (size_t)r->step];
    if (r->call >= 0 && (size_t)r->call < t->c[r->step].bs.n)
        m->call_s[r->call] = r->t.mean;
    else
        dl_tune_meas_step(t, m, r->t.mean, r->t.ci95, r->converged);
}

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

/* Rank 0, after the measurement, before the record's last write: tune's answer in it. */
static dl_status_t ts_end(void *arg, dl_job_t *j, dl_status_t st)
{
    tune_sink_t *k = arg;
    st = dl_status_worse(st, dl_tune_answer(k->t, k->ms, k->n, dl_run_sink_record(k->rs), j->dir,
                                            st));
    return k->inner.end(k->inner.arg, j, st);
}

static void tune_sink_free(tune_sink_t *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->ms[i].call_s);
    free(k->ms);
    dl_run_sink_free(k->rs);
}

/* ---- the measurement: a job running the step plan into tune's sink ---- */

static int measure(const dl_tune_t *t, const dl_optset_t *set, dl_plan_t *plan,
                   const dl_inject_t *inj, int argc, char **argv)
{
    const tune_cli_t *o = set->target;
    dl_job_cfg_t jc = {.command = "dlcomm tune", .o = &o->m, .set = set, .inject = inj,
                       .plan = plan, .argc = argc - 1, .argv = argv + 1};
    dl_job_t job;
    int code = dl_job_open(&jc, &job);
    if (code != 0)
        return code;
    tune_sink_t k = {.t = t};
    dl_run_sink_cfg_t rc = {.quiet = o->m.quiet, .html = o->html};
    dl_status_t st = dl_run_sink_new(&rc, &k.rs, &k.inner);
    dl_sink_t sink = {.arg = &k, .begin = ts_begin, .profile = ts_profile, .result = ts_result,
                      .profile_end = ts_profile_end, .interrupted = ts_interrupted, .end = ts_end};
    if (st == DL_OK)
        st = dl_job_run(&job, plan, &sink);
    code = dl_job_close(&job, st, &sink);
    tune_sink_free(&k);
    return code;
}

static int run_measured(const dl_tune_t *t, const dl_optset_t *set, int argc, char **argv)
{
    tune_cli_t *o = set->target;
    steps_t sp = {0};
    dl_plan_t plan;
    dl_inject_t inj;
    dl_log_set_mute(!dl_launcher_is_rank0());
    dl_status_t st = step_plan(t, o, &sp, &plan);
    if (st == DL_OK)
        st = dl_inject_parse(getenv("DLCOMM_INJECT"), &inj);
    dl_log_set_mute(0);
    int code = dl_status_exit_code(st);
    if (st == DL_OK) {
        /* The job's tables are never printed: tune prints its answer (-q: not that either). */
        o->m.quiet = 1;
        dl_log_set_quiet(1);
        /* SINGLE, as sweep: any higher level turns Open MPI 4.1's internal locking on. */
        code = 3;
        if (dl_job_mpi_start(&o->m, &argc, &argv) == DL_OK) {
            code = measure(t, set, &plan, &inj, argc, argv);
            MPI_Finalize();
        }
    }
    free(sp.steps);
    free(sp.calls);
    return code;
}

/* ---- the command line: one parse of tune's line ---- */

/* The files rank 0 will write, checked before anything runs. */
static dl_status_t outputs_check(const tune_cli_t *o)
{
    if (!dl_launcher_is_rank0()) /* rank 0 writes: its host decides */
        return DL_OK;
    dl_status_t st = DL_OK;
    if (o->t.json && dl_out_file_check("--json", o->t.json) != DL_OK)
        st = DL_ERR_USAGE;
    if (st == DL_OK && !o->t.plan_only)
        st = dl_an_sweep_check(0, NULL, o->html, o->m.out);
    if (st == DL_OK && !o->t.plan_only && o->html)
        st = dl_an_html_check("--html", o->html);
    return st;
}

static int tune_main(int argc, char **argv)
{
    dl_tune_t t;
    dl_optset_t set;
    memset(&t, 0, sizeof(t));
    if (dl_backend_optset_refusing(&set, tune_opts, DL_ARRAY_SIZE(tune_opts), sizeof(tune_cli_t),
                                   dl_opt_table_find("sweep"), sweep_only) != DL_OK)
        return 3;
    if (dl_opt_find(set.opts, set.n, "graph")) /* built with the nccl backend */
        dl_optset_fix(&set, "graph", not_a_step);
    tune_cli_t *o = set.target;
    dl_log_set_mute(!dl_launcher_is_rank0()); /* every rank finds the same mistake; rank 0 says it */
    int code = dl_opts_command(set.opts, set.n, o, argc - 1, argv + 1, NULL, 0, NULL, usage);
    if (code < 0) { /* a line to act on (else the help, or its refusal) */
        t.o = o->t;
        t.quiet = o->m.quiet;
        dl_status_t st = outputs_check(o);
        if (st == DL_OK)
            st = dl_tune_prepare(&t);
        code = st != DL_OK ? dl_status_exit_code(st) : -1;
    }
    dl_log_set_mute(0);
    if (code < 0)
        code = t.o.plan_only ? dl_tune_print_plan(&t) : run_measured(&t, &set, argc, argv);
    dl_tune_free(&t);
    dl_optset_free(&set);
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
