/* dlcomm sweep: collectives x dtypes x ops x sizes (x profiles), measured,
 * printed as tables, written as run.json and run.csv. */
#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "backends/backends.h"
#include "commands.h"
#include "engine/engine.h"
#include "measure/measure.h"
#include "results/results.h"
#include "sys/gpus.h"
#include "sys/launch.h"
#include "sys/launcher.h"
#include "sys/lastwords.h"
#include "sys/sys.h"
#include "sys/watchdog.h"

typedef struct {
    uint32_t colls, dtypes, ops; /* masks of dl_coll_id_t, dl_dtype_t, dl_op_t */
    int placement, aggregate;    /* index of place_names, dl_agg_t */
    int format;                  /* index of format_names */
    const char *backend, *out, *stepbytes;
    const char *profiles, *matrix, *split;
    uint64_t minbytes, maxbytes;
    double factor, ci_target, budget, timeout;
    long root, warmup, iters, min_iters, max_iters;
    int check, quiet, overwrite;
    int plot;               /* charts into the run folder at the end */
    const char *prometheus; /* node_exporter textfile at the end */
    const char *html;       /* the report page at the end */
} sweep_opts_t;

static const char *pos_long(const void *f) { return *(const long *)f > 0 ? NULL : "must be > 0"; }
static const char *fraction(const void *f)
{
    double v = *(const double *)f;
    return v > 0 && v < 1 ? NULL : "must be between 0 and 1 (e.g. 0.01 for 1%)";
}

/* --placement: out of place, in place, both (plan places bits 1, 2, 3). */
static const char *const place_names[] = {"out", "in", "both"};
static const dl_choices_t place_choices = {.noun = "placement", .names = place_names, .n = 3};
/* --format: the tables' layout. */
enum { FORMAT_TABLE, FORMAT_NCCLT };
static const char *const format_names[] = {"table", "nccl-tests"};
static const dl_choices_t format_choices = {.noun = "format", .names = format_names, .n = 2};

#define O(f) offsetof(sweep_opts_t, f)
static const dl_opt_t sweep_opts[] = {
    {"collectives", 'c', DL_OPT_LIST, "allreduce,allgather,broadcast", "LIST",
     "the collectives", O(colls), NULL, &dl_coll_choices},
    {"minbytes", 'b', DL_OPT_SIZE, "8", "SIZE", "smallest size (K/M/G suffixes)", O(minbytes), NULL},
    {"maxbytes", 'e', DL_OPT_SIZE, "128M", "SIZE", "largest size", O(maxbytes), NULL},
    {"stepfactor", 'f', DL_OPT_DOUBLE, "2", "F", "multiply the size by F (> 1)", O(factor), NULL},
    {"stepbytes", 'i', DL_OPT_STR, NULL, "SIZE", "add SIZE instead of multiplying", O(stepbytes), NULL},
    {"datatype", 'd', DL_OPT_LIST, "float32", "LIST", "the element types", O(dtypes), NULL,
     &dl_dtype_choices},
    {"op", 'o', DL_OPT_LIST, "sum", "LIST", "the reduction ops", O(ops), NULL, &dl_op_choices},
    {"root", 'r', DL_OPT_INT, "0", "RANK", "root of broadcast, reduce, gather and scatter", O(root), dl_opt_nonneg_long},
    {"placement", 0, DL_OPT_ENUM, "both", "WHERE", "where a result is written: a buffer of its own, the input's, or each in turn",
     O(placement), NULL, &place_choices},
    {"warmup_iters", 'w', DL_OPT_INT, "5", "N", "untimed iterations per size", O(warmup), dl_opt_nonneg_long},
    {"iters", 'n', DL_OPT_INT, "0", "N", "fixed timed iterations (0: adaptive)", O(iters), dl_opt_nonneg_long},
    {"ci-target", 0, DL_OPT_DOUBLE, "0.02", "FRAC",
     "adaptive: stop when the 95% CI half-width is within FRAC of the mean", O(ci_target), fraction},
    {"budget", 0, DL_OPT_DOUBLE, "0.1", "SEC", "adaptive: timing budget per size", O(budget), dl_opt_positive},
    {"min-iters", 0, DL_OPT_INT, "5", "N", "adaptive: fewest timed iterations", O(min_iters), pos_long},
    {"max-iters", 0, DL_OPT_INT, "100000", "N", "adaptive: most timed iterations", O(max_iters), pos_long},
    {"check", 0, DL_OPT_FLAG, "1", NULL, "validate every result", O(check), NULL},
    {"matrix", 0, DL_OPT_STR, NULL, "FILE",
     "alltoallv's bytes from rank i to j: a square matrix, as nccl-tests' NCCL_TESTS_ALLTOALLV_MATRIX_FILE "
     "(default: its generated pattern at the size)", O(matrix), NULL},
    {"split", 0, DL_OPT_STR, NULL, "MODE:K",
     "concurrent groups, each on its own communicator, as nccl-tests' NCCL_TESTS_SPLIT: MOD:k "
     "(rank r in group r % k), DIV:k (r / k), AND:mask, OR:mask; a row per group", O(split), NULL},
    {"aggregate", 'a', DL_OPT_ENUM, "max", "HOW",
     "an iteration's time over ranks: the slowest's, their mean, the fastest's or rank 0's",
     O(aggregate), NULL, &dl_agg_choices},
    {"backend", 0, DL_OPT_STR, "auto", "NAME",
     "who runs the collectives; auto: the first that works here of those that measure",
     O(backend), NULL, &dl_backend_choices},
    {"profiles", 'p', DL_OPT_STR, NULL, "LIST",
     "profiles (names or .json paths; default: default), each in fresh worker processes (nccl, sim)",
     O(profiles), NULL},
    {"out", 0, DL_OPT_STR, NULL, "DIR", "output folder (default results/<date>-<host>)", O(out), NULL},
    {"overwrite", 0, DL_OPT_FLAG, "0", NULL, "replace a finished run in --out (a live one is never)",
     O(overwrite), NULL},
    {"timeout", 0, DL_OPT_DOUBLE, "300", "SEC",
     "no progress for SEC: a worker's profile is ended and reported (mpi: the job is aborted)",
     O(timeout), dl_opt_positive},
    {"quiet", 'q', DL_OPT_FLAG, "0", NULL, "no tables on stdout (the header and the findings stay)",
     O(quiet), NULL},
    {"format", 0, DL_OPT_ENUM, "table", "FMT",
     "the tables' layout: dlcomm's, or nccl-tests' (its headers, a row per size with out-of-place "
     "and in-place side by side, for its log parsers)", O(format), NULL, &format_choices},
    {"plot", 0, DL_OPT_FLAG, "0", NULL, "plot busbw and time per collective into the run folder (gnuplot)",
     O(plot), NULL},
    {"prometheus", 0, DL_OPT_STR, NULL, "FILE", "write the figures for node_exporter's textfile collector",
     O(prometheus), NULL},
    {"html", 0, DL_OPT_STR, NULL, "FILE", "write the report's HTML page of the run at the end",
     O(html), NULL},
};
DL_OPTS_EXPORT_PLUGINS("sweep", sweep_opts, sweep_opts_t)
#undef O

static const char usage[] =
    "usage: mpirun -np N dlcomm sweep [options]\n\n"
    "Measures each collective at each size (warm-up, then timed iterations until the\n"
    "95% confidence interval is within --ci-target of the mean, or -n N fixed), checks\n"
    "every result, prints a table per collective and writes run.json and run.csv.\n"
    "Sizes a collective cannot divide are rounded down to a whole number of elements\n"
    "per rank, never below one (8 B of all-gather on 4 ranks is 16 B); each row keeps\n"
    "bytes_requested and the bytes used, and a size that rounds to the bytes of the one\n"
    "before is measured once. Options named for a backend (sim:, nccl:) are that\n"
    "backend's own.\n\n"
    "A header (the backend and why, the hosts, each rank's GPU, the versions) comes\n"
    "first; then a table per collective, one row per size and placement (4 CPU ranks;\n"
    "more in docs/sweep.md):\n"
    "  #        size        count      type  redop  root place       time        p50"
    "        p99     algbw     busbw  #wrong   iters stop\n"
    "  #         (B)   (elements)                              (us,batch)  (us,call)"
    "  (us,call)    (GB/s)    (GB/s)\n"
    "           2048          512   float32    sum     -   out      30.40      24.17"
    "     271.08      0.07      0.10       0    2346 ci\n"
    "         524288       131072   float32    sum     -   out    1308.00    1376.54"
    "    5266.92      0.40      0.60       0      78 budget\n"
    "  size     bytes per call as nccl-tests counts them (all-gather: the gathered buffer)\n"
    "  count    elements passed to the call (all-gather, scatter, ...: one rank's block)\n"
    "  type     the dtype (-d); redop: the reduction (-o), none for moving collectives\n"
    "  root     the root rank (-r), - where none; place: out of place or in place\n"
    "  time     us per call: the mean over batches of calls back to back, slowest rank\n"
    "           (-a); the rate a job issuing the same calls sees\n"
    "  p50 p99  us: median and 99th percentile of calls timed one by one, the spread (a\n"
    "           per-call timer costs a small call its overlap: p50 can exceed time)\n"
    "  algbw    size / time in GB/s (1e9 B/s); busbw: algbw x the collective's factor\n"
    "           (all-reduce 2(n-1)/n), comparable with nccl-tests' and the link speed\n"
    "  #wrong   wrong elements the check found (any: WRONG, exit 1; - not checked)\n"
    "  iters    timed calls; stop: why timing ended (ci: the CI target met; budget,\n"
    "           max-iters, fixed: -n)\n"
    "A footer of findings follows (wrong elements, busbw, rows not converged,\n"
    "stragglers, where the files went); -q drops the tables, never the findings.";

/* The command's options and every backend's, parsed as one command line:
 * the sweep's struct first, then backend k's at offset[k]. */
typedef struct {
    dl_optset_t set;
    sweep_opts_t *o;
} sweep_cli_t;

static dl_status_t cli_init(sweep_cli_t *c)
{
    dl_status_t st = dl_backend_optset(&c->set, sweep_opts, DL_ARRAY_SIZE(sweep_opts),
                                       sizeof(sweep_opts_t));
    c->o = c->set.target;
    return st;
}

static void *backend_opts(const sweep_cli_t *c, const dl_backend_ops_t *be)
{
    return dl_backend_optset_opts(&c->set, be);
}

/* An option of another backend than the one running is a mistake: said,
 * not ignored. Given = differs from its default. */
static dl_status_t foreign_opts(const sweep_cli_t *c, const dl_backend_ops_t *be, int say)
{
    for (size_t k = 0; k < dl_backend_count; k++) {
        const dl_backend_ops_t *b = dl_backends[k];
        if (b == be || !b->opts_size)
            continue;
        const dl_opt_t *given = dl_opts_first_given(b->opts, b->nopts, backend_opts(c, b));
        if (given) {
            if (say)
                dl_err("--%s is an option of the %s backend; this sweep runs on %s",
                       given->longname, b->name, be->name);
            return DL_ERR_USAGE;
        }
    }
    return DL_OK;
}

/* What the option text becomes, validated. */
typedef struct {
    dl_plan_t plan;
    dl_sizes_t sizes;
    uint64_t stepbytes;
    const dl_sweep_hook_t *hook; /* another command's plan (tune), or NULL */
} sweep_plan_t;

/* --matrix: read and checked before MPI starts (the launcher says how many
 * ranks there are), then named to the workers through their environment. */
static dl_status_t load_matrix(const char *path, uint32_t colls, size_t nsizes)
{
    dl_status_t st = (dl_status_t)dl_alltoallv_matrix_load(path, dl_launcher_size());
    if (st != DL_OK)
        return st;
    if ((colls & (1u << DL_COLL_ALLTOALLV)) && nsizes != 1) {
        dl_err("--matrix: alltoallv's counts come from the matrix, not the size: give one size (-b = -e)");
        return DL_ERR_USAGE;
    }
    char abs[4096];
    if (!realpath(path, abs) || setenv(DL_ALLTOALLV_MATRIX_ENV, abs, 1) != 0) {
        dl_err("--matrix %s: cannot name it to the workers", path);
        return DL_ERR_INPUT;
    }
    return DL_OK;
}

static dl_status_t build_plan(const sweep_opts_t *o, const dl_sweep_hook_t *hook,
                              sweep_plan_t *sp)
{
    dl_plan_t *p = &sp->plan;
    memset(sp, 0, sizeof(*sp));
    sp->hook = hook;
    dl_status_t st;
    p->colls = o->colls; /* the option rows checked the names */
    p->dtypes = o->dtypes;
    p->ops = o->ops;
    p->places = (uint32_t)o->placement + 1;
    if (o->stepbytes && dl_size_parse(o->stepbytes, &sp->stepbytes) != DL_OK) {
        dl_err("option --stepbytes: '%s' is not a valid SIZE", o->stepbytes);
        return DL_ERR_USAGE;
    }
    if (o->minbytes > o->maxbytes) {
        dl_err("--minbytes (%llu) is larger than --maxbytes (%llu)",
               (unsigned long long)o->minbytes, (unsigned long long)o->maxbytes);
        return DL_ERR_USAGE;
    }
    if (!sp->stepbytes && !(o->factor > 1.0)) {
        dl_err("--stepfactor must be > 1, not %g", o->factor);
        return DL_ERR_USAGE;
    }
    if (o->min_iters > o->max_iters) {
        dl_err("--min-iters (%ld) is larger than --max-iters (%ld)", o->min_iters, o->max_iters);
        return DL_ERR_USAGE;
    }
    st = dl_sizes_build(o->minbytes, o->maxbytes, o->factor, sp->stepbytes, &sp->sizes);
    if (st != DL_OK) {
        dl_err("the size range %llu..%llu gives no usable list of sizes",
               (unsigned long long)o->minbytes, (unsigned long long)o->maxbytes);
        return DL_ERR_USAGE;
    }
    p->sizes = sp->sizes.v;
    p->nsizes = sp->sizes.n;
    if (o->matrix && (st = load_matrix(o->matrix, p->colls, sp->sizes.n)) != DL_OK)
        return st;
    p->root = (int)o->root;
    p->mo = (dl_measure_opts_t){.agg = o->aggregate, .warmup = (int)o->warmup, .iters = (int)o->iters,
                                .ci_target = o->ci_target, .budget_s = o->budget,
                                .min_iters = (int)o->min_iters, .max_iters = (int)o->max_iters,
                                .check = o->check, .arrivals = 1};
    if (dl_split_parse(o->split, &p->mo.split) != DL_OK)
        return DL_ERR_USAGE;
    if (hook && p->mo.split.op != DL_SPLIT_NONE) {
        dl_err("--split: %s measures one communicator", hook->command);
        return DL_ERR_USAGE;
    }
    if (hook) { /* its steps replace the size range */
        p->sizes = hook->sizes;
        p->nsizes = hook->nsizes;
        p->places = hook->places;
        p->mo.step = 1;
    }
    return DL_OK;
}

/* ---- the deadline: a case that does not finish in time aborts the job ---- */

static int g_rank;

/* When this rank's collective failed, its peers sit inside the collective
 * and would wait out --timeout: give the agreement a moment, then end the
 * job (rank 0 has written every finished collective). */
#define DL_FAILURE_GRACE_S 3.0

static void on_local_failure(dl_status_t st)
{
    (void)st;
    dl_watchdog_failed();
}

static double on_deadline(void *arg, dl_wd_why_t why, int sig, const char *step)
{
    (void)arg; (void)sig; (void)step;
    if (why == DL_WD_FAILED) {
        dl_err("rank %d: its collective failed (above) and the peers cannot finish theirs; "
               "ending the job", g_rank);
        dl_lw_note(DL_LW_FAILED);
    } else {
        dl_err("rank %d: no progress for %.0f s (timeout): a peer is hung or gone; aborting",
               g_rank, dl_watchdog_timeout());
        dl_lw_note(DL_LW_TIMEOUT);
    }
    return 0;
}

/* ---- per-result output on rank 0 ---- */

typedef struct {
    int rank, nranks, quiet;
    cJSON *run, *profile;
    const char *outdir, *profile_name;
    const dl_coll_t *cur;
    size_t done, total;
    uint64_t wrong;
    dl_status_t io;
    char *hosts;       /* rank 0: nranks names of 256 chars (dl_sys_fingerprint) */
    dl_rank_tally_t late; /* rank 0: the rows' stragglers */
    dl_ncclt_t *nt;    /* rank 0, --format nccl-tests: its layout instead of the table */
} sweep_out_t;

/* A "stragglers" list in run.json (the footer prints it): each rank named
 * by the rule of dl_rank_tally_t, with its host and why. */
static void report_stragglers(const sweep_out_t *s)
{
    if (!s->late.late_rows)
        return;
    cJSON *a = cJSON_AddArrayToObject(s->run, "stragglers");
    for (int i = 0; i < s->nranks; i++) {
        dl_rank_why_t w;
        if (!dl_rank_tally_named(&s->late, i, &w))
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", i);
        cJSON_AddStringToObject(e, "host", s->hosts ? s->hosts + (size_t)i * 256 : "");
        cJSON_AddNumberToObject(e, "rows", w.late_rows);
        cJSON_AddNumberToObject(e, "of_rows", w.rows);
        cJSON_AddNumberToObject(e, "late_us", w.late_s * 1e6);
        if (w.slow_rows) {
            cJSON_AddNumberToObject(e, "slow_rows", w.slow_rows);
            cJSON_AddNumberToObject(e, "slow_ratio", w.slow_ratio);
        }
        cJSON_AddItemToArray(a, e);
    }
}

/* The record is shared with the thread that answers SIGINT/SIGTERM
 * (on_interrupt): a row is added, or the record written, whole. */
static pthread_mutex_t g_out_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_out_final; /* the run is over: a late signal changes nothing */

static dl_status_t on_result_locked(void *arg, dl_result_t *r);
static dl_status_t on_result(void *arg, dl_result_t *r)
{
    pthread_mutex_lock(&g_out_lock);
    dl_status_t st = on_result_locked(arg, r);
    pthread_mutex_unlock(&g_out_lock);
    return st;
}

static dl_status_t on_result_locked(void *arg, dl_result_t *r)
{
    sweep_out_t *s = arg;
    dl_watchdog_step(NULL);
    s->done++;
    s->wrong += r->wrong;
    if (s->rank != 0)
        return DL_OK;
    if (s->cur != r->c.coll) {
        if (s->cur && s->io == DL_OK) /* a finished collective is never lost */
            s->io = dl_record_write(s->run, s->outdir);
        s->cur = r->c.coll;
        dl_progress_end();
        if (!s->quiet && !s->nt)
            dl_table_header(stdout, s->cur, s->profile_name, r->bus_ranks, &r->split);
    }
    dl_record_add_row(s->profile, r);
    dl_rank_tally_add(&s->late, r);
    dl_progress_end();
    if (!s->quiet && s->nt)
        dl_ncclt_row(s->nt, r, s->profile_name);
    else if (!s->quiet)
        dl_table_row(stdout, r);
    char what[128], sz[32];
    dl_size_format(r->c.counts.bytes, sz, sizeof(sz));
    snprintf(what, sizeof(what), "%s %s %s", r->c.coll->name, dl_dtype_names[r->c.dtype], sz);
    dl_progress(s->done, s->total, what);
    return DL_OK;
}

/* Rank 0 picks and creates the output folder; everyone learns the outcome. */
static dl_status_t prepare_outdir(const sweep_opts_t *o, int rank, char *dir, size_t len)
{
    int st = DL_OK;
    if (rank == 0) {
        dl_host_info_t h;
        dl_sys_host_info(&h);
        if (o->out && strlen(o->out) + 32 >= len) { /* room for its files: never cut */
            dl_err("--out: a folder name of %zu bytes; at most %zu", strlen(o->out), len - 33);
            st = DL_ERR_USAGE;
        } else if (o->out)
            snprintf(dir, len, "%s", o->out);
        else
            dl_out_dir_default(dir, len, h.host);
        if (st == DL_OK && (dl_mkdir_p(dir) != DL_OK || dl_dir_writable(dir) != DL_OK)) {
            dl_err("--out %s: cannot create or write that folder", dir);
            st = DL_ERR_IO;
        }
        if (st == DL_OK)
            st = dl_out_claim(dir, o->overwrite);
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(dir, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    return (dl_status_t)st;
}

/* The groups of a --split run, each with its world ranks (a row's group
 * indexes them). */
static void split_json(cJSON *run, const dl_split_t *sl)
{
    char name[48];
    dl_split_name(sl, name, sizeof(name));
    cJSON *o = cJSON_AddObjectToObject(run, "split");
    cJSON_AddStringToObject(o, "spec", name);
    cJSON_AddNumberToObject(o, "ranks_per_group", sl->size);
    cJSON *a = cJSON_AddArrayToObject(o, "groups");
    int *ranks = malloc((size_t)sl->world * sizeof(int));
    for (int g = 0; ranks && g < sl->groups; g++)
        cJSON_AddItemToArray(a, cJSON_CreateIntArray(ranks, dl_split_members(sl, g, ranks)));
    free(ranks);
}

static cJSON *run_header(const sweep_cli_t *cli, const char *name, int argc, char **argv,
                         cJSON *fingerprint)
{
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "%s", name);
    size_t n = strlen(cmd);
    for (int i = 0; i < argc && n < sizeof(cmd) - 2; i++)
        n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " %s", argv[i]);
    cJSON *run = dl_record_new(cmd);
    cJSON *opts = cJSON_AddObjectToObject(run, "options");
    dl_opts_echo(cli->set.opts, cli->set.n, cli->set.target, opts);
    cJSON_AddItemToObject(run, "fingerprint", fingerprint);
    cJSON_AddItemToObject(run, "environment", dl_env_allowlist());
    return run;
}

/* A case whose element count the backend's calls cannot take is refused
 * before anything runs (exit 2), never measured as something else. */
static dl_status_t count_limit(const sweep_plan_t *sp, const dl_backend_ops_t *be, int nranks)
{
    for (int c = 0; be->max_count && c < DL_COLL_COUNT; c++)
        for (int d = 0; (sp->plan.colls >> c & 1) && d < DL_DT_COUNT; d++) {
            if (!(sp->plan.dtypes >> d & 1))
                continue;
            dl_counts_t cnt;
            dl_colls[c]->counts(sp->plan.sizes[sp->plan.nsizes - 1], dl_dtype_size((dl_dtype_t)d),
                                nranks, 0, &cnt);
            if (cnt.param_count > be->max_count) {
                dl_err("%s of %zu %s elements: the %s backend's calls take at most %llu "
                       "elements (int counts); lower --maxbytes", dl_colls[c]->name,
                       cnt.param_count, dl_dtype_names[d], be->name,
                       (unsigned long long)be->max_count);
                return DL_ERR_USAGE;
            }
        }
    return DL_OK;
}

/* What a worker sweep needs beyond the options: the profiles and what the
 * backend's setup resolved (a model's system and size). Checked before any
 * file is written. */
typedef struct {
    dl_profile_t *profiles;
    int nprofiles;
    dl_backend_setup_t setup;
} sweep_inputs_t;

static dl_status_t load_inputs(const sweep_cli_t *cli, const dl_backend_ops_t *be, int rank,
                               sweep_inputs_t *in)
{
    const sweep_opts_t *o = cli->o;
    memset(in, 0, sizeof(*in));
    dl_status_t st = foreign_opts(cli, be, rank == 0);
    if (st != DL_OK)
        return st;
    if (!dl_backend_has(be, DL_CAP_WORKER)) {
        if (o->profiles && rank == 0)
            dl_err("-p needs a worker backend (--backend nccl or sim): MPI's own settings are "
                   "fixed at launch, so the %s backend runs one implicit profile", be->name);
        return o->profiles ? DL_ERR_USAGE : DL_OK;
    }
    dl_log_set_mute(rank != 0); /* every rank finds the same mistake; rank 0 says it */
    st = dl_profiles_load(o->profiles ? o->profiles : "default", &in->profiles, &in->nprofiles);
    if (st == DL_OK && be->setup)
        st = be->setup(backend_opts(cli, be), &in->setup);
    dl_log_set_mute(0);
    return st;
}

static cJSON *profile_json(cJSON *run, const dl_profile_t *p, const dl_backend_ops_t *be)
{
    cJSON *pj = dl_record_add_profile(run, p->name, be->name, dl_backend_has(be, DL_CAP_MODELLED));
    cJSON_AddStringToObject(pj, "description", p->description);
    cJSON_AddStringToObject(pj, "file", p->path);
    cJSON *env = cJSON_AddObjectToObject(pj, "env");
    for (int i = 0; i < p->nenv; i++) {
        char k[256];
        const char *eq = strchr(p->env[i], '=');
        snprintf(k, sizeof(k), "%.*s", (int)(eq - p->env[i]), p->env[i]);
        if (!dl_env_credential_like(k)) /* the environment's rule, in a file too */
            cJSON_AddStringToObject(env, k, eq + 1);
    }
    cJSON_AddItemToObject(pj, "intent", cJSON_Duplicate(p->intent, 1));
    return pj;
}

/* SIGINT/SIGTERM while the ranks themselves measure (mpi): the main thread
 * may sit in a collective that never returns, so this thread answers.
 * Open MPI 4.1's mpirun, signalled, sends the ranks SIGCONT, then SIGTERM a
 * second later, then SIGKILL a second after that: rank 0 writes the rows
 * done so far and the final state within that second, every rank exits 3. */
#define DL_RECORD_WAIT_S 0.9
static void on_interrupt(int sig, void *arg)
{
    sweep_out_t *s = arg;
    pthread_mutex_lock(&g_out_lock);
    if (g_out_final) { /* measured to the end: the run finishes as it would */
        pthread_mutex_unlock(&g_out_lock);
        return;
    }
    if (s->rank == 0) {
        sig = dl_launch_stop_cause(sig);
        char why[160];
        snprintf(why, sizeof(why), "interrupted by %s after %zu of %zu cases", dl_lw_signame(sig),
                 s->done, s->total);
        dl_record_set_status(s->profile, DL_REC_INTERRUPTED, why);
        dl_lw_record(s->profile, s->hosts, s->nranks); /* a peer killed first is the cause */
        cJSON_AddStringToObject(s->run, "interrupted_by", dl_lw_signame(sig));
        cJSON_AddNumberToObject(s->run, "exit_code", 3);
        dl_progress_end();
        if (s->io == DL_OK && dl_record_write(s->run, s->outdir) == DL_OK)
            dl_err("%s: %s/run.json keeps the %zu finished rows", why, s->outdir, s->done);
        else
            dl_err("%s; %s/run.json could not be written", why, s->outdir);
        dl_lw_recorded();
    } else {
        dl_lw_wait_recorded(DL_RECORD_WAIT_S);
    }
    fflush(NULL);
    dl_launch_note(3);
    _exit(3);
}

/* The one implicit profile of a backend that runs in the supervisors (mpi):
 * the same fault-injection wrapper as in a worker. */
static dl_status_t run_inprocess(const sweep_plan_t *sp, const dl_backend_ops_t *be,
                                 const void *be_opts, const dl_inject_t *inj, sweep_out_t *out,
                                 double timeout)
{
    MPI_Comm world = MPI_COMM_WORLD;
    int local_rank = 0, local_size = 1;
    dl_sys_local_rank(world, &local_rank, &local_size);
    /* --split: the backend and the loop's figures on the group's own
     * communicator, the loop's agreements over the world (x.all). */
    const dl_split_t *sl = &sp->plan.mo.split;
    MPI_Comm group = MPI_COMM_NULL;
    dl_xcomm_t x, xa;
    dl_xcomm_mpi_init(&xa, &world);
    if (sl->op != DL_SPLIT_NONE &&
        MPI_Comm_split(world, dl_split_group(sl, out->rank), out->rank, &group) != MPI_SUCCESS)
        return DL_ERR_COMM;
    dl_xcomm_mpi_init(&x, group != MPI_COMM_NULL ? &group : &world);
    if (group != MPI_COMM_NULL) {
        x.all = &xa;
        x.group = dl_split_group(sl, out->rank);
        x.groups = sl->groups;
    }
    x.local_failure = on_local_failure;
    dl_backend_cfg_t cfg = {.rank = x.rank, .nranks = x.nranks, .local_rank = local_rank,
                            .local_size = local_size, .opts = be_opts, .xc = &x,
                            .profile_name = be->name, .deadline_s = timeout,
                            .split = x.all ? sl : NULL, .world_rank = out->rank};
    void *ctx = NULL;
    dl_status_t st = be->init(&cfg, &ctx);
    dl_watchdog_cfg_t wc = {.timeout_s = timeout, .fail_grace_s = DL_FAILURE_GRACE_S,
                            .on_expire = on_deadline};
    dl_watchdog_start(&wc);

    if (st == DL_OK && be->describe && out->profile) /* as a worker's INFO record */
        be->describe(ctx, cJSON_AddObjectToObject(out->profile, "backend_info"));
    dl_inject_wrap_t iw;
    dl_inject_wrap(&iw, inj, be, ctx, out->rank, NULL);
    dl_lw_on_interrupt(on_interrupt, out);
    if (st == DL_OK)
        st = dl_plan_run(&sp->plan, &iw.ops, &iw, &x, on_result, out);
    pthread_mutex_lock(&g_out_lock);
    g_out_final = 1;
    pthread_mutex_unlock(&g_out_lock);
    dl_watchdog_idle(); /* every rank agreed: the run ends normally */
    if (ctx)
        be->fini(ctx);
    if (group != MPI_COMM_NULL)
        MPI_Comm_free(&group);
    return st;
}

/* Every profile in worker processes, one after the other; a failed one is
 * recorded and the next runs. *stop: interrupted, or the job cannot go on. */
static dl_status_t run_workers(const sweep_opts_t *o, const sweep_plan_t *sp,
                               const sweep_inputs_t *in, const dl_backend_ops_t *be,
                               const void *be_opts, const dl_inject_t *inj, sweep_out_t *out,
                               int *stop)
{
    MPI_Comm world = MPI_COMM_WORLD;
    int local_rank = 0, local_size = 1, nodes = 0;
    dl_sys_local_rank(world, &local_rank, &local_size);
    int first = local_rank == 0;
    MPI_Allreduce(&first, &nodes, 1, MPI_INT, MPI_SUM, world);
    dl_engine_cfg_t ec = {.plan = &sp->plan, .be = be, .be_opts = be_opts, .inject = inj,
                          .timeout_s = o->timeout, .run_dir = out->outdir, .world = world,
                          .rank = out->rank, .nranks = out->nranks, .local_rank = local_rank,
                          .local_size = local_size, .nodes = nodes, .on_result = on_result,
                          .cb_arg = out};
    dl_engine_t *e = NULL;
    dl_status_t worst = dl_engine_open(&ec, &e);
    if (worst != DL_OK)
        return worst;
    dl_engine_signals_install();
    int i;
    for (i = 0; i < in->nprofiles && !*stop; i++) {
        const dl_profile_t *p = &in->profiles[i];
        char why[160], label[128];
        /* A model's node count decides for a model (the system it is given). */
        const char *skip = dl_profile_skip_reason(p, in->setup.nodes > 0 ? in->setup.nodes : nodes,
                                                  why, sizeof(why));
        cJSON *pj = out->rank == 0 ? profile_json(out->run, p, be) : NULL;
        if (skip) {
            if (pj) {
                dl_record_set_status(pj, DL_REC_SKIPPED, skip);
                dl_info("profile %s skipped: %s", p->name, skip);
            }
        } else {
            snprintf(label, sizeof(label), "%s%s", p->name,
                     dl_backend_has(be, DL_CAP_MODELLED) ? " (modelled)" : "");
            out->profile = pj;
            out->profile_name = label;
            out->cur = NULL;
            uint64_t wrong_before = out->wrong;
            dl_prof_status_t ps;
            worst = dl_status_worse(worst, dl_engine_run_profile(e, p, pj, &ps));
            dl_progress_end();
            if (pj && ps == DL_PROF_OK)
                dl_record_set_status(pj, out->wrong > wrong_before ? DL_REC_WRONG : DL_REC_OK, NULL);
            *stop = ps == DL_PROF_INTERRUPTED || dl_engine_broken(e);
        }
        if (out->rank == 0 && out->io == DL_OK) /* a finished profile is never lost */
            out->io = dl_record_write(out->run, out->outdir);
    }
    for (; out->rank == 0 && i < in->nprofiles; i++) { /* the record says what never ran */
        cJSON *pj = profile_json(out->run, &in->profiles[i], be);
        dl_record_set_status(pj, DL_REC_SKIPPED, "not run: the sweep stopped before it");
    }
    if (!dl_engine_broken(e)) /* only rank 0 saw the results */
        MPI_Bcast(&out->wrong, 1, MPI_UINT64_T, 0, world);
    else
        *stop = 2;
    dl_engine_close(e);
    return worst;
}

/* A fault planted on a profile this run does not have would never fire:
 * an injection silently ignored is bad input (exit 2), as a bad rank is. */
static dl_status_t inject_profile_check(const dl_inject_t *inj, const sweep_inputs_t *in, int rank)
{
    if (inj->kind == DL_INJECT_NONE || !inj->profile[0])
        return DL_OK;
    char names[512];
    size_t n = 0;
    names[0] = '\0';
    for (int i = 0; i < in->nprofiles; i++) {
        if (strcmp(in->profiles[i].name, inj->profile) == 0)
            return DL_OK;
        if (n < sizeof(names))
            n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "",
                                  in->profiles[i].name);
    }
    if (rank == 0)
        dl_err("DLCOMM_INJECT: profile '%s' is not one this run has (%s)", inj->profile, names);
    return DL_ERR_USAGE;
}

static int sweep_mpi(const sweep_cli_t *cli, sweep_plan_t *sp, const dl_inject_t *inj,
                     int argc, char **argv)
{
    const sweep_opts_t *o = cli->o;
    int rank, nranks;
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &nranks);
    g_rank = rank;
    dl_split_t *sl = &sp->plan.mo.split;
    dl_log_set_mute(rank != 0);
    dl_status_t st = dl_split_check(sl, nranks);
    dl_log_set_mute(0);
    if (st != DL_OK)
        return dl_status_exit_code(st);
    if (sp->plan.root >= sl->size) {
        if (rank == 0)
            dl_err("--root %d: there are only %d ranks%s", sp->plan.root, sl->size,
                   sl->op != DL_SPLIT_NONE ? " in each --split group" : "");
        return 2;
    }
    char chose[512];
    const dl_backend_ops_t *be = dl_backend_choose(o->backend, rank == 0, chose, sizeof(chose));
    if (!be)
        return 2;
    if (sl->op != DL_SPLIT_NONE && !dl_backend_has(be, DL_CAP_SPLIT)) {
        if (rank == 0)
            dl_err("--split: the %s backend cannot run on groups of the ranks", be->name);
        return 2;
    }
    dl_log_set_mute(rank != 0);
    st = count_limit(sp, be, sl->size);
    if (st == DL_OK)
        st = dl_inject_validate(inj, be, nranks);
    dl_log_set_mute(0);
    if (st != DL_OK)
        return dl_status_exit_code(st);
    if (dl_backend_has(be, DL_CAP_DEVICE) && dl_gpus_check(world, 0, "or --backend mpi"))
        return 2; /* more ranks than GPUs on a host: every rank agreed, nothing written */
    int workers = dl_backend_has(be, DL_CAP_WORKER), modelled = dl_backend_has(be, DL_CAP_MODELLED);
    sweep_inputs_t in;
    st = load_inputs(cli, be, rank, &in);
    if (st == DL_OK && in.setup.ranks > 0 && in.setup.ranks % sl->groups) {
        if (rank == 0) /* a model's groups are of its ranks, not of the processes */
            dl_err("--split: the model's %d ranks do not make %d equal groups", in.setup.ranks,
                   sl->groups);
        st = DL_ERR_USAGE;
    }
    if (st == DL_OK && workers)
        st = inject_profile_check(inj, &in, rank);
    if (st != DL_OK) {
        dl_profiles_free(in.profiles, in.nprofiles);
        return dl_status_exit_code(st);
    }
    char dir[4096];
    if (prepare_outdir(o, rank, dir, sizeof(dir)) != DL_OK) {
        dl_profiles_free(in.profiles, in.nprofiles);
        return 2;
    }

    char *hosts = NULL;
    cJSON *fp = dl_sys_fingerprint(world, &hosts);
    cJSON *gpus = dl_backend_has(be, DL_CAP_DEVICE) ? dl_gpus_rank_map(world) : NULL;
    if (fp && gpus) /* each rank's GPU, for the header and for compare */
        cJSON_AddItemToObject(fp, "rank_gpus", gpus);
    dl_host_info_t me;
    dl_sys_host_info(&me);
    dl_lw_open(world, dir, rank, nranks, me.host); /* how a rank ends, if not normally */
    sweep_out_t out = {.rank = rank, .nranks = nranks, .quiet = o->quiet, .outdir = dir,
                       .hosts = hosts,
                       .profile_name = be->name,
                       .total = dl_plan_cases(&sp->plan, be, in.setup.ranks > 0
                                              ? in.setup.ranks / sl->groups : sl->size) *
                                (size_t)(workers ? in.nprofiles : 1) *
                                (size_t)sl->groups};
    if (rank == 0) {
        out.run = run_header(cli, sp->hook ? sp->hook->command : "dlcomm sweep", argc, argv, fp);
        if (sl->op != DL_SPLIT_NONE)
            split_json(out.run, sl);
        if (!workers)
            out.profile = dl_record_add_profile(out.run, be->name, be->name, modelled);
        else /* what the backend resolved (the sim: its system file) */
            dl_backend_facts_add(&in.setup, out.run);
        dl_record_backend(out.run, be->name, chose, workers ? &in.setup : NULL);
        dl_banner_header(stdout, out.run, !o->quiet && o->format == FORMAT_TABLE);
        if (o->format == FORMAT_NCCLT)
            out.nt = dl_ncclt_new(stdout, out.run);
        dl_rank_tally_init(&out.late, nranks, NULL, hosts);
    }
    int stop = 0;
    void *be_opts = backend_opts(cli, be);
    st = workers ? run_workers(o, sp, &in, be, be_opts, inj, &out, &stop)
                 : run_inprocess(sp, be, be_opts, inj, &out, o->timeout);
    dl_profiles_free(in.profiles, in.nprofiles);
    dl_progress_end();
    int sig = dl_launch_stop_cause(dl_engine_interrupted());
    if (rank == 0 && stop) { /* who was killed, or which signal stopped the job */
        dl_lw_record(out.profile, hosts, nranks);
        if (sig)
            cJSON_AddStringToObject(out.run, "interrupted_by", dl_lw_signame(sig));
    }

    if (st == DL_OK && out.wrong)
        st = DL_ERR_CHECK;
    if (rank == 0) {
        if (!workers) /* worker profiles carry their own status */
            dl_record_set_status(out.profile,
                                 st == DL_OK          ? DL_REC_OK
                                 : st == DL_ERR_CHECK ? DL_REC_WRONG
                                                      : DL_REC_ERROR,
                                 st == DL_OK || st == DL_ERR_CHECK ? NULL : dl_status_str(st));
        report_stragglers(&out);
        if (sp->hook) /* its analysis goes into the record */
            st = dl_status_worse(st, sp->hook->finish(sp->hook->arg, out.run, dir, st));
        dl_record_set_exit(out.run, dl_status_exit_code(st));
        dl_status_t io = dl_record_write(out.run, dir);
        int written = io == DL_OK; /* else run.json is the last whole version */
        if (io == DL_OK) /* the record's code is the run's, whatever ends this process */
            dl_launch_note(dl_status_exit_code(st));
        if (io == DL_OK && stop) /* mpirun's SIGKILL may follow within a second: no charts */
            dl_err("%s%s: %s/run.json keeps the %zu finished rows", sig ? "interrupted by " : "stopped",
                   sig ? dl_lw_signame(sig) : "", dir, out.done);
        else if (io == DL_OK) /* charts and the Prometheus file come from what was written */
            io = dl_an_after_sweep(dir, o->plot, o->prometheus, o->html);
        dl_ncclt_free(out.nt); /* its last block's closing lines */
        dl_banner_footer(stdout, out.run, dir, written);
        if (out.wrong)
            dl_err("%llu wrong elements (see wrong_per_rank in %s/run.json)",
                   (unsigned long long)out.wrong, dir);
        if (io != DL_OK) {
            st = dl_status_worse(st, io);
            /* The record says how the run ended, charts included. */
            dl_record_set_exit(out.run, dl_status_exit_code(st));
            if (written && dl_record_write(out.run, dir) == DL_OK)
                dl_launch_note(dl_status_exit_code(st));
        }
        cJSON_Delete(out.run);
    }
    free(hosts);
    dl_rank_tally_free(&out.late);
    if (stop == 2) { /* a peer is gone: MPI cannot finish cleanly */
        if (rank == 0)
            dl_lw_recorded();
        else
            dl_lw_wait_recorded(DL_RECORD_WAIT_S);
        fflush(NULL);
        dl_launch_note(dl_status_exit_code(st));
        MPI_Abort(world, dl_status_exit_code(st));
    }
    return dl_status_exit_code(st);
}

static int sweep_main(int argc, char **argv)
{
    return dl_sweep_main(argc, argv, NULL);
}

int cmd_sweep(int argc, char **argv)
{
    return dl_stdio_run(sweep_main, argc, argv, 1);
}

int dl_sweep_main(int argc, char **argv, const dl_sweep_hook_t *hook)
{
    sweep_cli_t cli;
    int help = 0;
    if (cli_init(&cli) != DL_OK) {
        dl_err("out of memory");
        return 3;
    }
    const sweep_opts_t *o = cli.o;
    /* Options are checked before MPI starts; under mpirun every rank finds
     * the same mistake, and only rank 0 says so. */
    dl_log_set_mute(!dl_launcher_is_rank0());
    dl_status_t st = dl_opts_parse(cli.set.opts, cli.set.n, cli.set.target, argc - 1, argv + 1,
                                   NULL, 0, NULL, &help);
    sweep_plan_t sp;
    memset(&sp, 0, sizeof(sp));
    if (st == DL_OK && !help)
        st = build_plan(o, hook, &sp);
    dl_inject_t inj; /* bad DLCOMM_INJECT is bad input: refused before any file is written */
    if (st == DL_OK && !help)
        st = dl_inject_parse(getenv("DLCOMM_INJECT"), &inj);
    if (st == DL_OK && !help && dl_launcher_is_rank0()) /* rank 0 plots and writes: its host decides */
        st = dl_an_sweep_check(o->plot, o->prometheus, o->html, o->out);
    if (st == DL_OK && !help && dl_launcher_is_rank0() && o->html)
        st = dl_an_html_check("--html", o->html);
    dl_log_set_mute(0);
    if (help)
        dl_opts_help(stdout, hook ? hook->usage : usage, cli.set.opts, cli.set.n);
    if (help || st != DL_OK) {
        dl_sizes_free(&sp.sizes);
        dl_optset_free(&cli.set);
        return help ? 0 : dl_status_exit_code(st);
    }
    dl_log_set_quiet(o->quiet);

    /* SINGLE, not FUNNELED: Open MPI 4.1 turns its internal locking on for
     * any level above SINGLE, which made an 8 B all-reduce 25% slower. The
     * deadline thread's only MPI call is its last (MPI_Abort). */
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    int code = sweep_mpi(&cli, &sp, &inj, argc - 1, argv + 1);
    dl_sizes_free(&sp.sizes);
    MPI_Finalize();
    dl_optset_free(&cli.set);
    return code;
}
