/*
 * job: what every measuring command does around its plan, once.
 *
 *   dl_job_open   picks the backend; checks its capabilities against the
 *                 plan (counts, --split, the root), the fault injection and
 *                 the GPUs; loads the profiles and the backend's setup;
 *                 claims the output folder; gathers the fingerprint and
 *                 opens the last-words record.
 *   dl_job_run    runs a plan (dl_plan_t: a sweep or training steps) on
 *                 every profile, in the ranks or in workers, and hands each
 *                 profile and row to a sink.
 *   dl_job_close  the sink's last word, the job's exit code, and the abort
 *                 when a peer is gone.
 *
 * A command is its options, its plan and its sink: sweep's sink is the run
 * record with its tables (dl_run_sink, sink_run.c); tune's wraps that one.
 * Nothing in here knows which command runs it.
 *
 * preflight opens only the first half (dl_job_pick, dl_job_fingerprint):
 * its stages are not a plan of cases run to the end but checks in order
 * (hosts, correctness, world bandwidth, the scopes that localise), each
 * judged as it ends and a worker's fault skipping the rest, over
 * long-lived sessions, with a verdict instead of a record of rows; its
 * last words are the BROKE verdict its watchdog writes (preflight/broke.c).
 */
#ifndef DL_JOB_H
#define DL_JOB_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "../engine/engine.h"
#include "../measure/measure.h"
#include "../results/record.h"

/* ---- the options every measuring command takes ---- */

typedef struct {
    const char *backend, *profiles, *out;
    double ci_target, budget, timeout;
    long warmup, iters, min_iters, max_iters;
    int check, quiet, overwrite;
} dl_job_opts_t;

const char *dl_job_pos_long(const void *f);
const char *dl_job_fraction(const void *f);

/* Rows for a command's table whose struct holds a dl_job_opts_t at member
 * m: how each case is timed, then where and on what it runs. */
#define DL_JOB_TIMING_ROWS(type, m) DL_JOB_TIMING_ROWS_AT(type, m, "5", "0.1")
/* The same with a command's own defaults for -w and --budget (tune's step
 * is longer than a sweep's call). */
#define DL_JOB_TIMING_ROWS_AT(type, m, warmup_def, budget_def)                                \
    {"warmup_iters", 'w', DL_OPT_INT, warmup_def, "N", "untimed iterations per size",         \
     offsetof(type, m.warmup), dl_opt_nonneg_long},                                           \
    {"iters", 'n', DL_OPT_INT, "0", "N", "fixed timed iterations (0: adaptive)",              \
     offsetof(type, m.iters), dl_opt_nonneg_long},                                            \
    {"ci-target", 0, DL_OPT_DOUBLE, "0.02", "FRAC",                                           \
     "adaptive: stop when the 95% CI half-width is within FRAC of the mean (0: each size "    \
     "runs its whole --budget)",                                                              \
     offsetof(type, m.ci_target), dl_job_fraction},                                           \
    {"budget", 0, DL_OPT_DOUBLE, budget_def, "SEC", "adaptive: timing budget per size",       \
     offsetof(type, m.budget), dl_opt_positive},                                              \
    {"min-iters", 0, DL_OPT_INT, "5", "N", "adaptive: fewest timed iterations",               \
     offsetof(type, m.min_iters), dl_job_pos_long},                                           \
    {"max-iters", 0, DL_OPT_INT, "100000", "N", "adaptive: most timed iterations",            \
     offsetof(type, m.max_iters), dl_job_pos_long},                                           \
    {"check", 0, DL_OPT_FLAG, "1", NULL, "validate every result", offsetof(type, m.check), NULL}

#define DL_JOB_RUN_ROWS(type, m)                                                               \
    {"backend", 0, DL_OPT_STR, "auto", "NAME",                                                \
     "who runs the collectives; auto: the first that works here of those that measure",       \
     offsetof(type, m.backend), NULL, &dl_backend_choices},                                   \
    {"profiles", 'p', DL_OPT_STR, NULL, "LIST",                                               \
     "profiles (names or .json paths; default: default), each in fresh worker processes "     \
     "(nccl, sim)", offsetof(type, m.profiles), NULL},                                        \
    {"out", 0, DL_OPT_STR, NULL, "DIR", "output folder (default results/<date>-<time>-<host>)",       \
     offsetof(type, m.out), NULL},                                                            \
    {"overwrite", 0, DL_OPT_FLAG, "0", NULL,                                                  \
     "replace a finished run in --out (a live one is never)", offsetof(type, m.overwrite),    \
     NULL},                                                                                   \
    {"timeout", 0, DL_OPT_DOUBLE, "300", "SEC",                                               \
     "no progress for SEC: a worker's profile is ended and reported (mpi: the job is aborted)", \
     offsetof(type, m.timeout), dl_opt_positive},                                             \
    {"quiet", 'q', DL_OPT_FLAG, "0", NULL,                                                    \
     "no tables on stdout (the header and the findings stay)", offsetof(type, m.quiet), NULL}

/* The timing rows as the loop takes them; min > max is bad usage. */
dl_status_t dl_job_timing(const dl_job_opts_t *o, dl_measure_opts_t *mo);
/* MPI's start for a job (dl_mpi_start): control only when the backend
 * o->backend names (or auto finds here) runs in workers. */
dl_status_t dl_job_mpi_start(const dl_job_opts_t *o, int *argc, char ***argv);

/* ---- the job ---- */

typedef struct {
    const char *command;      /* the record's name: "dlcomm sweep" */
    const dl_job_opts_t *o;
    const dl_optset_t *set;   /* the command's line: its rows and every backend's */
    const dl_inject_t *inject;
    dl_plan_t *plan;          /* checked when opened (its --split sized to the world) */
    int argc;                 /* the command line, for the record */
    char **argv;
} dl_job_cfg_t;

typedef struct dl_job {
    dl_job_cfg_t cfg;
    int rank, nranks, local_rank, local_size, nodes;
    const dl_backend_ops_t *be;
    void *be_opts;            /* in cfg.set's target */
    char chose[512];          /* why this backend */
    int workers, modelled;    /* DL_CAP_WORKER, DL_CAP_MODELLED */
    int per_gpu;              /* device backends: the most ranks on one GPU (> 1: ranks
                                 that are NCCL hosts of their own share it) */
    dl_profile_t *profiles;   /* workers: -p's; else none (one implicit profile) */
    int nprofiles;
    dl_backend_setup_t setup; /* what the backend's setup resolved (a model's system) */
    char dir[4096];           /* the output folder, claimed */
    cJSON *fingerprint;       /* rank 0 takes it into its record (then NULL) */
    char *hosts;              /* rank 0: nranks names of DL_RANK_NAME_LEN chars */
    size_t total;             /* rows the plan gives, every profile and group */
    uint64_t wrong;           /* wrong elements so far, every row */
    int stop;                 /* 1: interrupted or cannot go on; 2: a peer is gone */
    int sig;                  /* the signal that stopped it, or 0 */
} dl_job_t;

/* Where the rows and profiles go. Callbacks marked rank 0 run there only. */
typedef struct {
    void *arg;
    /* rank 0, once, before anything runs: the header (fingerprint, backend) */
    dl_status_t (*begin)(void *arg, dl_job_t *j);
    /* rank 0: a profile starts (p NULL: the backend's one implicit profile,
     * in the ranks); its record object, which the engine fills. skip: it
     * does not run, and why (then no rows and no profile_end follow) */
    cJSON *(*profile)(void *arg, const dl_job_t *j, const dl_profile_t *p, const char *label,
                      const char *skip);
    /* every rank (workers: rank 0 only), each row; non-OK stops the plan */
    dl_status_t (*result)(void *arg, dl_result_t *r);
    /* rank 0: how the profile that ran ended (DL_REC_OK, _WRONG, _ERROR;
     * DL_REC_UNKNOWN: as the engine recorded it), and why (NULL: no reason) */
    void (*profile_end)(void *arg, const dl_job_t *j, dl_rec_status_t status, const char *reason);
    /* rank 0, on the signal thread (in-rank backends): keep what is done */
    void (*interrupted)(void *arg, const dl_job_t *j, int sig);
    /* rank 0, last: the job's status in, the command's status out */
    dl_status_t (*end)(void *arg, dl_job_t *j, dl_status_t st);
} dl_sink_t;

/* Opening's first half, for a command with a measurement loop of its own
 * (preflight; cfg->plan and cfg->set may be NULL): the ranks, the backend
 * and why, its capabilities against the plan, the injection, the GPUs.
 * Collective over MPI_COMM_WORLD; 0, or the exit code (the line said). */
int dl_job_pick(const dl_job_cfg_t *cfg, dl_job_t *j);
/* The job's fingerprint (hosts, versions, each rank's GPU) into
 * j->fingerprint, and the hosts' names into j->hosts (rank 0). Collective. */
void dl_job_fingerprint(dl_job_t *j);
/* All of it: dl_job_pick, then the profiles and the backend's setup, the
 * output folder, the fingerprint and the last words. Collective over
 * MPI_COMM_WORLD. On a refusal, the line is said (rank 0)
 * and the exit code returned; 0 when open. */
int dl_job_open(const dl_job_cfg_t *cfg, dl_job_t *j);
dl_status_t dl_job_run(dl_job_t *j, const dl_plan_t *plan, const dl_sink_t *s);
/* The sink's end (rank 0), then the exit code; never returns when a peer is gone. */
int dl_job_close(dl_job_t *j, dl_status_t st, const dl_sink_t *s);

/* The backend options of every other backend than the job's, at their
 * defaults: one given is a mistake, said ("this WHAT runs on ...", unless
 * what is NULL), DL_ERR_USAGE. */
dl_status_t dl_job_foreign_opts(const dl_optset_t *set, const dl_backend_ops_t *be,
                                const char *what);

/* ---- the run record as a sink (sink_run.c): run.json, run.csv, the tables ---- */

typedef struct dl_run_sink dl_run_sink_t;
typedef struct {
    int quiet, ncclt;           /* no tables; nccl-tests' layout instead of the table */
    int plot;                   /* after the run: charts, Prometheus, the page */
    const char *prometheus, *html;
    void (*header)(void *arg, cJSON *run); /* adds the command's own to the header */
    void *header_arg;
} dl_run_sink_cfg_t;
dl_status_t dl_run_sink_new(const dl_run_sink_cfg_t *cfg, dl_run_sink_t **out, dl_sink_t *sink);
void dl_run_sink_free(dl_run_sink_t *rs);
/* The record being written (rank 0): a wrapping sink adds its own part. */
cJSON *dl_run_sink_record(dl_run_sink_t *rs);

#endif
