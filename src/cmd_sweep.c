/* dlcomm sweep: collectives x dtypes x ops x sizes (x profiles), measured,
 * printed as tables, written as run.json and run.csv. The command is its
 * options, its plan and the run record's sink; the job layer (src/job/)
 * does the rest. */
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "backends/backends.h"
#include "commands.h"
#include "job/job.h"
#include "measure/measure.h"
#include "results/results.h"
#include "sys/mpistart.h"
#include "sys/launcher.h"

typedef struct {
    uint32_t colls, dtypes, ops; /* masks of dl_coll_id_t, dl_dtype_t, dl_op_t */
    int placement, aggregate;    /* index of place_names, dl_agg_t */
    int format;                  /* index of format_names */
    const char *stepbytes, *matrix, *split;
    uint64_t minbytes, maxbytes;
    double factor;
    long root;
    int plot;               /* charts into the run folder at the end */
    const char *prometheus; /* node_exporter textfile at the end */
    const char *html;       /* the report page at the end */
    dl_job_opts_t m;        /* the measurement's: timing, backend, profiles, folder */
} sweep_opts_t;

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
    DL_JOB_TIMING_ROWS(sweep_opts_t, m),
    {"matrix", 0, DL_OPT_STR, NULL, "FILE",
     "alltoallv's bytes from rank i to j: a square matrix, as nccl-tests' NCCL_TESTS_ALLTOALLV_MATRIX_FILE "
     "(default: its generated pattern at the size)", O(matrix), NULL},
    {"split", 0, DL_OPT_STR, NULL, "MODE:K",
     "concurrent groups, each on its own communicator, as nccl-tests' NCCL_TESTS_SPLIT: MOD:k "
     "(rank r in group r % k), DIV:k (r / k), AND:mask, OR:mask; a row per group", O(split), NULL},
    {"aggregate", 'a', DL_OPT_ENUM, "max", "HOW",
     "an iteration's time over ranks: the slowest's, their mean, the fastest's or rank 0's",
     O(aggregate), NULL, &dl_agg_choices},
    DL_JOB_RUN_ROWS(sweep_opts_t, m),
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
    "        p99     algbw     busbw  #wrong   iters           chose stop\n"
    "  #         (B)   (elements)                              (us,batch)  (us,call)"
    "  (us,call)    (GB/s)    (GB/s)                 (algo/proto/ch)\n"
    "           2048          512   float32    sum     -   out      30.40      24.17"
    "     271.08      0.07      0.10       0    2346               - ci\n"
    "         524288       131072   float32    sum     -   out    1308.00    1376.54"
    "    5266.92      0.40      0.60       0      78               - budget\n"
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
    "           noisy: a quarter of it predicted no convergence, max-iters, fixed: -n,\n"
    "           no-op: one rank in place moves nothing, timed over the first batches)\n"
    "  chose    what the library chose at the row's checked call, never a timed one:\n"
    "           algorithm/protocol/channels (NCCL: its profiler events; sim: the\n"
    "           model's, by NCCL's rules); - not known (mpi), * the ranks differed\n"
    "A footer of findings follows (wrong elements, busbw, rows not converged,\n"
    "stragglers, where the files went); -q drops the tables, never the findings.";

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

/* What the option text becomes, validated. */
typedef struct {
    dl_plan_t plan;
    dl_sizes_t sizes;
    uint64_t stepbytes;
} sweep_plan_t;

static dl_status_t check_sizes(const sweep_opts_t *o, sweep_plan_t *sp)
{
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
    return DL_OK;
}

/* Why the range gave no list, in its own words: too many sizes (a step
 * that small is a typo), or no memory for them. */
static dl_status_t sizes_refused(const sweep_opts_t *o, const sweep_plan_t *sp, dl_status_t st)
{
    unsigned long long lo = o->minbytes, hi = o->maxbytes;
    if (st == DL_ERR_NOMEM) {
        dl_err("out of memory for the list of sizes %llu..%llu", lo, hi);
        return st;
    }
    if (lo > 0 && hi >= lo && (sp->stepbytes || o->factor > 1.0))
        dl_err("the size range %llu..%llu gives more than %d sizes (a sweep takes at most "
               "that many): use a larger step (-i) or a factor (-f)", lo, hi, DL_SIZES_MAX);
    else
        dl_err("the size range %llu..%llu gives no usable list of sizes", lo, hi);
    return DL_ERR_USAGE;
}

static dl_status_t build_plan(const sweep_opts_t *o, sweep_plan_t *sp)
{
    dl_plan_t *p = &sp->plan;
    memset(sp, 0, sizeof(*sp));
    p->kind = DL_PLAN_SWEEP;
    p->sweep.colls = o->colls; /* the option rows checked the names */
    p->sweep.dtypes = o->dtypes;
    p->sweep.ops = o->ops;
    p->places = (uint32_t)o->placement + 1;
    dl_status_t st = check_sizes(o, sp);
    if (st == DL_OK)
        st = dl_job_timing(&o->m, &p->mo);
    if (st != DL_OK)
        return st;
    st = dl_sizes_build(o->minbytes, o->maxbytes, o->factor, sp->stepbytes, &sp->sizes);
    if (st != DL_OK)
        return sizes_refused(o, sp, st);
    p->sweep.sizes = sp->sizes.v;
    p->sweep.nsizes = sp->sizes.n;
    if (o->matrix && (st = load_matrix(o->matrix, p->sweep.colls, sp->sizes.n)) != DL_OK)
        return st;
    p->root = (int)o->root;
    p->mo.agg = o->aggregate;
    p->mo.arrivals = 1;
    return dl_split_parse(o->split, &p->mo.split) == DL_OK ? DL_OK : DL_ERR_USAGE;
}

/* The job: opened, the plan run into the run record's sink, closed. */
static int sweep_mpi(const dl_optset_t *set, sweep_plan_t *sp, const dl_inject_t *inj,
                     int argc, char **argv)
{
    const sweep_opts_t *o = set->target;
    dl_job_cfg_t jc = {.command = "dlcomm sweep", .o = &o->m, .set = set, .inject = inj,
                       .plan = &sp->plan, .argc = argc, .argv = argv};
    dl_job_t job;
    int code = dl_job_open(&jc, &job);
    if (code != 0)
        return code;
    dl_run_sink_cfg_t rc = {.quiet = o->m.quiet, .ncclt = o->format == FORMAT_NCCLT,
                            .plot = o->plot, .prometheus = o->prometheus, .html = o->html};
    dl_run_sink_t *rs = NULL;
    dl_sink_t sink;
    dl_status_t st = dl_run_sink_new(&rc, &rs, &sink);
    if (st == DL_OK)
        st = dl_job_run(&job, &sp->plan, &sink);
    code = dl_job_close(&job, st, &sink);
    dl_run_sink_free(rs);
    return code;
}

/* Options are checked before MPI starts; under mpirun every rank finds the
 * same mistake, and only rank 0 says so. */
static dl_status_t parse(dl_optset_t *set, int argc, char **argv, sweep_plan_t *sp,
                         dl_inject_t *inj, int *help)
{
    const sweep_opts_t *o = set->target;
    dl_log_set_mute(!dl_launcher_is_rank0());
    dl_status_t st = dl_opts_parse(set->opts, set->n, set->target, argc - 1, argv + 1, NULL, 0,
                                   NULL, help);
    if (st == DL_OK && !*help)
        st = build_plan(o, sp);
    /* bad DLCOMM_INJECT is bad input: refused before any file is written */
    if (st == DL_OK && !*help)
        st = dl_inject_parse(getenv("DLCOMM_INJECT"), inj);
    if (st == DL_OK && !*help && dl_launcher_is_rank0()) /* rank 0 plots and writes: its host decides */
        st = dl_an_sweep_check(o->plot, o->prometheus, o->html, o->m.out);
    if (st == DL_OK && !*help && dl_launcher_is_rank0() && o->html)
        st = dl_an_html_check("--html", o->html);
    dl_log_set_mute(0);
    return st;
}

static int sweep_main(int argc, char **argv)
{
    dl_optset_t set;
    int help = 0;
    if (dl_backend_optset(&set, sweep_opts, DL_ARRAY_SIZE(sweep_opts), sizeof(sweep_opts_t)) != DL_OK) {
        dl_err("out of memory");
        return 3;
    }
    sweep_plan_t sp;
    memset(&sp, 0, sizeof(sp));
    dl_inject_t inj;
    dl_status_t st = parse(&set, argc, argv, &sp, &inj, &help);
    if (help)
        dl_opts_help(stdout, usage, set.opts, set.n);
    if (help || st != DL_OK) {
        dl_sizes_free(&sp.sizes);
        dl_optset_free(&set);
        return help ? 0 : dl_status_exit_code(st);
    }
    dl_log_set_quiet(((const sweep_opts_t *)set.target)->m.quiet);
    /* SINGLE, not FUNNELED: Open MPI 4.1 turns its internal locking on for
     * any level above SINGLE, which made an 8 B all-reduce 25% slower. The
     * watchdog thread's only MPI call is its last (MPI_Abort). */
    int code = 3;
    if (dl_job_mpi_start(&((const sweep_opts_t *)set.target)->m, &argc, &argv) == DL_OK) {
        code = sweep_mpi(&set, &sp, &inj, argc - 1, argv + 1);
        MPI_Finalize();
    }
    dl_sizes_free(&sp.sizes);
    dl_optset_free(&set);
    return code;
}

int cmd_sweep(int argc, char **argv)
{
    return dl_stdio_run(sweep_main, argc, argv, 1);
}
