/* dlcomm preflight: pass/fail checks before a job, with a verdict that names
 * the host, GPU, rail or pair at fault. See src/preflight/preflight.h. */
#include <errno.h>
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "commands.h"
#include "engine/engine.h"
#include "job/job.h"
#include "preflight/preflight.h"
#include "results/results.h"
#include "sys/mpistart.h"
#include "sys/gpus.h"
#include "sys/launcher.h"
#include "sys/sys.h"

typedef struct {
    const char *sizes, *baseline, *system, *json, *backend, *profile, *prometheus, *html;
    int pairs;       /* dl_pf_pairs_t */
    uint32_t scopes; /* bit 0 node, 1 rail, 2 pair, 3 plan */
    uint64_t check_bytes, scope_bytes;
    double min_fraction, mad_k, budget, timeout, max_temp;
    long iters;
    int quick, gpu;
    long fleet, seed, group; /* --fleet: the modelled fleet */
    const char *fault;
    double noise, target;
} pf_cli_t;

static const char *fraction(const void *f)
{
    double v = *(const double *)f;
    return v > 0 && v <= 1 ? NULL : "must be in (0, 1], e.g. 0.9 for 90%";
}

static const char *noise_frac(const void *f)
{
    return *(const double *)f >= 0 && *(const double *)f < 1 ? NULL : "must be in [0, 1)";
}

static const char *group_size(const void *f)
{
    return *(const long *)f >= 2 ? NULL : "must be 2 or more hosts";
}

static const char *const pairs_names[] = {"auto", "all", "ring", "none"}; /* dl_pf_pairs_t */
static const dl_choices_t pairs_choices = {.noun = "pairing", .names = pairs_names, .n = 4};
static const char *const scope_names[] = {"node", "rail", "pair", "plan"};
static const dl_choices_t scope_choices = {.noun = "scope", .names = scope_names, .n = 4};

#define O(f) offsetof(pf_cli_t, f)
static const dl_opt_t pf_opts[] = {
    {"sizes", 's', DL_OPT_STR, "16M,64M", "LIST", "world bandwidth sizes (each judged alone)",
     O(sizes), NULL},
    {"check-size", 0, DL_OPT_SIZE, "1M", "SIZE", "correctness size of every collective",
     O(check_bytes), NULL},
    {"scope-size", 0, DL_OPT_SIZE, "16M", "SIZE", "all-reduce size of node, rail and pair figures",
     O(scope_bytes), NULL},
    {"baseline", 0, DL_OPT_STR, NULL, "RUN.JSON", "judge world bandwidth against this dlcomm run",
     O(baseline), NULL},
    {"system", 0, DL_OPT_STR, NULL, "NAME|FILE",
     "a system description, a name (dlcomm __complete systems) or a path: world bandwidth is "
     "judged against its model, GPU copies against its \"gpu\" figures", O(system), NULL},
    {"min-fraction", 0, DL_OPT_DOUBLE, "0.9", "FRAC",
     "pass at >= FRAC of the baseline; outliers are below FRAC of the median", O(min_fraction),
     fraction},
    {"outlier-mads", 0, DL_OPT_DOUBLE, "2.5", "K", "an outlier is also K MADs below the median",
     O(mad_k), dl_opt_positive},
    {"pairs", 0, DL_OPT_ENUM, "auto", "MODE",
     "node pairs measured: all, a ring of them, none, or auto (all up to 16 hosts)", O(pairs),
     NULL, &pairs_choices},
    {"scopes", 0, DL_OPT_LIST, "node,rail,pair", "LIST",
     "the scopes that localise a fault; plan: the adaptive planner, in fewer rounds than pair "
     "from 8 hosts (it sees links between neighbours in host order only); all: every one",
     O(scopes), NULL, &scope_choices},
    {"budget", 0, DL_OPT_DOUBLE, "0.3", "SEC", "timing budget of one figure", O(budget), dl_opt_positive},
    {"iters", 'n', DL_OPT_INT, "0", "N", "fixed timed iterations per figure (0: budget)", O(iters),
     dl_opt_nonneg_long},
    {"quick", 0, DL_OPT_FLAG, "0", NULL, "one bandwidth size, budget 0.1 s: about 60 s on 8 nodes",
     O(quick), NULL},
    {"gpu", 0, DL_OPT_FLAG, "1", NULL, "GPU health through NVML when present", O(gpu), NULL},
    {"max-temp", 0, DL_OPT_DOUBLE, "85", "C", "GPU temperature above this warns", O(max_temp),
     dl_opt_positive},
    {"backend", 0, DL_OPT_STR, "auto", "NAME",
     "who runs the collectives; auto: the first that works here of those that measure; a "
     "worker backend (nccl, sim) runs in worker processes", O(backend), NULL, &dl_backend_choices},
    {"profile", 'p', DL_OPT_STR, "ring", "NAME",
     "nccl, sim: the profile the node, rail and pair scopes run under (ring: NCCL_ALGO=Ring, "
     "whose figures reflect a link; e.g. ib for the fabric alone)", O(profile), NULL},
    {"timeout", 0, DL_OPT_DOUBLE, "120", "SEC", "a step making no progress this long: exit 3",
     O(timeout), dl_opt_positive},
    {"json", 0, DL_OPT_STR, NULL, "FILE", "write every check, scope, suspect and the verdict",
     O(json), NULL},
    {"prometheus", 0, DL_OPT_STR, NULL, "FILE|DIR",
     "write the verdict per host for node_exporter's textfile collector (a folder: "
     "DIR/dlcomm-preflight.prom)", O(prometheus), NULL},
    {"html", 0, DL_OPT_STR, NULL, "FILE",
     "write the verdict, the host x host pair matrix as a heat map and every check as one "
     "page", O(html), NULL},
    {"fleet", 0, DL_OPT_INT, "0", "N",
     "model N nodes of --system (h200-sxm-8 if not given) and run the adaptive planner on "
     "them, without mpirun: the probes, rounds, projected wall time and verdict", O(fleet),
     dl_opt_nonneg_long},
    {"fault", 0, DL_OPT_STR, NULL, "LIST",
     "--fleet: faults to plant, comma-separated: node:HOST:FACTOR, link:HOST:HOST:FACTOR, "
     "rail:RAIL:FACTOR, flap:HOST:FACTOR[:SHARE] (hosts and rails from 0)", O(fault), NULL},
    {"noise", 0, DL_OPT_DOUBLE, "0", "FRAC",
     "--fleet: noise of each timed iteration (sd of its log time: 0.05 is about 5%)", O(noise),
     noise_frac},
    {"seed", 0, DL_OPT_INT, "1", "N", "--fleet: the noise's and flaps' random seed", O(seed),
     dl_opt_nonneg_long},
    {"target", 0, DL_OPT_DOUBLE, "0.2", "FRAC",
     "--fleet: the smallest slowdown the planner must separate (0.2: 20% slower)", O(target),
     fraction},
    {"group", 0, DL_OPT_INT, "8", "G", "--fleet: hosts in one screen probe of the planner",
     O(group), group_size},
};
DL_OPTS_EXPORT("preflight", pf_opts, pf_cli_t)
#undef O

static const char usage[] =
    "usage: mpirun -np N dlcomm preflight [options]\n"
    "       dlcomm preflight --fleet N [--fault LIST] [--noise FRAC] [options]\n\n"
    "Checks a set of hosts before a job: GPU health (NVML), NUMA binding, correctness of\n"
    "every collective, bandwidth against a baseline, and scopes that localise a fault\n"
    "(each node alone, each rail, node pairs). One line per check, then a VERDICT line.\n"
    "--fleet runs the adaptive planner on a model of N nodes instead, without MPI.\n"
    "Exit 0 pass (warnings allowed), 1 a check failed, 2 bad usage, 3 the run broke.";

typedef struct {
    dl_pf_opts_t o;
    uint64_t sizes[16];
    dl_record_t baseline;
    char prom[4096];
    dl_system_t system;        /* --system, read once */
    void *model_opts;          /* the modelling backend's options (o.model) */
    dl_backend_setup_t model_setup;
} pf_setup_t;

static dl_status_t parse_sizes(const char *s, pf_setup_t *ps)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", s);
    char *save = NULL;
    ps->o.nsizes = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (ps->o.nsizes == DL_ARRAY_SIZE(ps->sizes) || dl_size_parse(t, &ps->sizes[ps->o.nsizes]) ||
            ps->sizes[ps->o.nsizes] == 0) {
            dl_err("--sizes: '%s' is not a SIZE (or more than 16 sizes)", t);
            return DL_ERR_USAGE;
        }
        ps->o.nsizes++;
    }
    if (!ps->o.nsizes) {
        dl_err("--sizes: give at least one size");
        return DL_ERR_USAGE;
    }
    ps->o.sizes = ps->sizes;
    return DL_OK;
}

/* --system: the description (its GPU figures), and the modelling backend
 * that judges world bandwidth, its options from preflight's own. */
static dl_status_t system_setup(const pf_cli_t *a, pf_setup_t *ps)
{
    dl_status_t st = dl_system_load("--system", a->system, &ps->system);
    if (st != DL_OK)
        return st;
    ps->o.system = &ps->system;
    const dl_backend_ops_t *m = dl_backend_model();
    if (!m) /* a build without a model: the GPU figures still judge */
        return DL_OK;
    st = dl_backend_opts_from(m, pf_opts, DL_ARRAY_SIZE(pf_opts), a, &ps->model_opts,
                              &ps->model_setup);
    if (st == DL_OK)
        ps->o.model = (struct dl_pf_model){m, ps->model_opts};
    return st;
}

static dl_status_t setup(const pf_cli_t *a, pf_setup_t *ps)
{
    memset(ps, 0, sizeof(*ps));
    dl_pf_opts_t *o = &ps->o;
    dl_status_t st = parse_sizes(a->sizes, ps);
    if (st != DL_OK)
        return st;
    o->pairs = (dl_pf_pairs_t)a->pairs;
    o->scopes = (int)a->scopes;
    if (a->quick) { /* the largest size alone judges bandwidth */
        for (size_t i = 1; i < o->nsizes; i++)
            if (ps->sizes[i] > ps->sizes[0])
                ps->sizes[0] = ps->sizes[i];
        o->nsizes = 1;
    }
    o->check_bytes = a->check_bytes;
    o->scope_bytes = a->scope_bytes;
    o->min_fraction = a->min_fraction;
    o->mad_k = a->mad_k;
    o->timeout_s = a->timeout;
    o->gpu_checks = a->gpu;
    o->max_temp_c = a->max_temp;
    o->json_path = a->json;
    if (dl_inject_parse(getenv("DLCOMM_INJECT"), &o->inject) != DL_OK)
        return DL_ERR_USAGE;
    double budget = a->quick && a->budget > 0.1 ? 0.1 : a->budget;
    o->mo = (dl_measure_opts_t){.warmup = 1, .iters = (int)a->iters, .ci_target = 0.02,
                                .budget_s = budget, .min_iters = 3, .max_iters = 1000,
                                .check = 1};
    if (a->json) { /* a run is not wasted on a file that cannot be written */
        dl_status_t st = dl_out_file_check("--json", a->json);
        if (st != DL_OK)
            return st;
    }
    if (a->html && (st = dl_out_file_check("--html", a->html)) != DL_OK)
        return st;
    if (a->prometheus) {
        dl_status_t st = dl_prom_target("--prometheus", a->prometheus, "dlcomm-preflight.prom",
                                        ps->prom, sizeof(ps->prom));
        if (st != DL_OK)
            return st;
        o->prom_path = ps->prom;
    }
    if (a->system && (st = system_setup(a, ps)) != DL_OK)
        return st;
    if (a->baseline && dl_launcher_is_rank0()) { /* the one reader: it names the file and the problem */
        dl_status_t lst = dl_an_load(a->baseline, &ps->baseline); /* no memory: 3, not 2 */
        if (lst != DL_OK)
            return lst == DL_ERR_NOMEM ? lst : DL_ERR_INPUT;
        o->baseline = &ps->baseline;
        o->baseline_path = a->baseline;
    }
    return DL_OK;
}

static cJSON *doc_new(const pf_cli_t *a, int argc, char **argv)
{
    char cmd[4096] = "dlcomm preflight";
    size_t n = strlen(cmd);
    for (int i = 0; i < argc && n < sizeof(cmd) - 2; i++)
        n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " %s", argv[i]);
    cJSON *d = dl_record_head(cmd);
    cJSON_AddStringToObject(d, "kind", "preflight");
    dl_opts_echo(pf_opts, DL_ARRAY_SIZE(pf_opts), a, cJSON_AddObjectToObject(d, "options"));
    cJSON_AddItemToObject(d, "environment", dl_env_allowlist());
    return d;
}

static int finish(const pf_cli_t *a, const pf_setup_t *ps, cJSON *doc, dl_status_t st)
{
    int code = dl_status_exit_code(st);
    cJSON_AddNumberToObject(doc, "exit_code", code);
    if (a->json) {
        char *s = cJSON_Print(doc);
        dl_status_t io = s ? dl_write_atomic(a->json, s, strlen(s)) : DL_ERR_NOMEM;
        cJSON_free(s);
        if (io != DL_OK && code == 0)
            code = dl_status_exit_code(io);
    }
    if (a->html) {
        dl_status_t io = dl_pf_html(a->html, doc);
        if (io != DL_OK && code == 0)
            code = dl_status_exit_code(io);
    }
    if (ps->o.prom_path) {
        dl_status_t io = dl_pf_prometheus(ps->o.prom_path, doc);
        if (io != DL_OK && code == 0)
            code = dl_status_exit_code(io);
    }
    return code;
}

/* Where a worker backend's collectives run: one session (worker per rank)
 * for the world checks under the default profile, one for the scopes under
 * --profile. */
typedef struct {
    const dl_backend_ops_t *be;
    void *be_opts;
    dl_profile_t *world_p, *scope_p;
    int nworld, nscope;
    dl_session_t *world_s, *scope_s;
    dl_backend_setup_t setup;
    char run_dir[1024];
    cJSON *fingerprint; /* rank 0: the job's, as sweep's record has it */
} pf_workers_t;

/* The backend's own options from preflight's: the shared names mean the same. */
static dl_status_t backend_opts(const pf_cli_t *a, pf_workers_t *w)
{
    return dl_backend_opts_from(w->be, pf_opts, DL_ARRAY_SIZE(pf_opts), a, &w->be_opts, &w->setup);
}

/* Worker logs: beside --json (FILE.workers/), else a folder of its own. */
static dl_status_t logs_dir(const pf_cli_t *a, int rank, char *dir, size_t len)
{
    int st = DL_OK;
    if (rank == 0) {
        if (a->json)
            snprintf(dir, len, "%s.workers", a->json);
        else
            snprintf(dir, len, "%s/dlcomm-preflight-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!a->json && !mkdtemp(dir)) {
            dl_err("cannot create the worker log folder %s: %s", dir, strerror(errno));
            st = DL_ERR_IO;
        }
        if (a->json) /* this run's, or the caller's own: nothing planted there is followed */
            st = dl_dir_private(dir, NULL);
        if (st == DL_OK) {
            char wd[1024 + 16];
            snprintf(wd, sizeof(wd), "%s/workers", dir);
            st = dl_dir_private(wd, NULL);
        }
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(dir, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    return (dl_status_t)st;
}

static dl_status_t workers_open(const pf_cli_t *a, pf_setup_t *ps, pf_workers_t *w, int rank,
                                int nranks)
{
    dl_log_set_mute(rank != 0);
    dl_status_t st = backend_opts(a, w);
    if (st == DL_OK)
        st = dl_profiles_load("default", &w->world_p, &w->nworld);
    if (st == DL_OK)
        st = dl_profiles_load(a->profile, &w->scope_p, &w->nscope);
    if (st == DL_OK && w->nscope != 1) {
        dl_err("--profile %s: give one profile for the scopes", a->profile);
        st = DL_ERR_USAGE;
    }
    dl_log_set_mute(0);
    if (st == DL_OK)
        st = logs_dir(a, rank, w->run_dir, sizeof(w->run_dir));
    if (st != DL_OK)
        return st;
    int lr = 0, ls = 1;
    dl_sys_local_rank(MPI_COMM_WORLD, &lr, &ls);
    /* A worker that does not answer in half of --timeout is hung: the
     * supervisors' own watchdog (the whole of it) never has to act. */
    dl_session_cfg_t sc = {.be = w->be, .be_opts = w->be_opts, .inject = &ps->o.inject,
                           .profile = w->world_p, .run_dir = w->run_dir, .rank = rank,
                           .nranks = nranks, .local_rank = lr, .local_size = ls,
                           .timeout_s = a->timeout / 2};
    st = dl_session_open(&sc, &w->world_s);
    sc.profile = w->scope_p;
    if (st == DL_OK)
        st = dl_session_open(&sc, &w->scope_s);
    ps->o.on_world = (struct dl_pf_backend){&dl_session_ops, w->world_s, w->world_p->name};
    ps->o.on_scopes = (struct dl_pf_backend){&dl_session_ops, w->scope_s, w->scope_p->name};
    return st;
}

static void workers_close(pf_workers_t *w)
{
    dl_session_close(w->world_s);
    dl_session_close(w->scope_s);
    dl_profiles_free(w->world_p, w->nworld);
    dl_profiles_free(w->scope_p, w->nscope);
    free(w->be_opts);
}

/* The backend (the job layer's pick: its capabilities, the injection and
 * the GPUs checked as for every command), and where its collectives run;
 * exit code or -1 to go on. */
static int pick(const pf_cli_t *a, pf_setup_t *ps, pf_workers_t *w, int rank, int nranks)
{
    dl_job_opts_t jo = {.backend = a->backend, .timeout = a->timeout};
    dl_job_cfg_t jc = {.command = "dlcomm preflight", .o = &jo, .inject = &ps->o.inject};
    dl_job_t job;
    int code = dl_job_pick(&jc, &job);
    if (code != 0)
        return code;
    w->be = job.be;
    dl_job_fingerprint(&job);
    w->fingerprint = job.fingerprint;
    free(job.hosts);
    if (!job.workers && strcmp(a->profile, "ring") != 0) {
        if (rank == 0)
            dl_err("--profile needs a worker backend (nccl, sim): the %s backend runs in the MPI "
                   "ranks, whose settings are fixed at launch", w->be->name);
        return 2;
    }
    ps->o.modelled = job.modelled;
    if (!job.workers) {
        ps->o.on_world = ps->o.on_scopes = (struct dl_pf_backend){w->be, NULL, w->be->name};
        return -1;
    }
    dl_status_t st = workers_open(a, ps, w, rank, nranks);
    return st == DL_OK ? -1 : dl_status_exit_code(st);
}

static void doc_backend(cJSON *doc, const pf_setup_t *ps, const pf_workers_t *w)
{
    cJSON *b = cJSON_AddObjectToObject(doc, "backend");
    cJSON_AddStringToObject(b, "name", w->be->name);
    cJSON_AddBoolToObject(b, "modelled", dl_backend_has(w->be, DL_CAP_MODELLED));
    cJSON_AddBoolToObject(b, "workers", dl_backend_has(w->be, DL_CAP_WORKER));
    cJSON_AddStringToObject(b, "world_profile", ps->o.on_world.profile);
    cJSON_AddStringToObject(b, "scope_profile", ps->o.on_scopes.profile);
    if (w->run_dir[0])
        cJSON_AddStringToObject(b, "worker_logs", w->run_dir);
    dl_backend_facts_add(&w->setup, b);
    const char *info = w->world_s ? dl_session_info(w->world_s) : NULL;
    cJSON *i = info ? cJSON_Parse(info) : NULL;
    if (i)
        cJSON_AddItemToObject(b, "info", i);
}

/* --fleet N: the planner on a model, in this process alone (no MPI). */
static int fleet_main(const pf_cli_t *a, pf_setup_t *ps, int argc, char **argv)
{
    if (!ps->o.model.be) {
        dl_err("--fleet: this build has no modelling backend to give probe times");
        return 2;
    }
    dl_pf_fleet_opts_t f = {.nodes = (int)a->fleet, .faults = a->fault, .noise = a->noise,
                            .target = a->target, .seed = a->seed, .group = (int)a->group};
    cJSON *doc = doc_new(a, argc - 1, argv + 1);
    dl_status_t st = dl_pf_fleet_run(&ps->o, &f, doc);
    int code = st == DL_ERR_USAGE || st == DL_ERR_NOMEM ? dl_status_exit_code(st)
                                                         : finish(a, ps, doc, st);
    cJSON_Delete(doc);
    dl_record_free(&ps->baseline);
    free(ps->model_opts);
    return code;
}

/* Options that only mean something with --fleet, and the model it needs. */
static dl_status_t fleet_args(pf_cli_t *a)
{
    if (!a->fleet) {
        if (a->fault) {
            dl_err("--fault plants a fault in a modelled fleet: give --fleet N too");
            return DL_ERR_USAGE;
        }
        return DL_OK;
    }
    if (a->fleet < 2 || a->fleet > 1000000) {
        dl_err("--fleet: %ld nodes: give 2 to 1000000", a->fleet);
        return DL_ERR_USAGE;
    }
    if (!a->system)
        a->system = "h200-sxm-8";
    return DL_OK;
}

static int preflight_main(int argc, char **argv)
{
    pf_cli_t a = {0};
    pf_setup_t ps;
    int help = 0;
    dl_log_set_mute(!dl_launcher_is_rank0());
    dl_status_t st = dl_opts_parse(pf_opts, DL_ARRAY_SIZE(pf_opts), &a, argc - 1, argv + 1, NULL,
                                   0, NULL, &help);
    if (st == DL_OK && !help)
        st = fleet_args(&a);
    if (st == DL_OK && !help)
        st = setup(&a, &ps);
    dl_log_set_mute(0);
    if (help) {
        dl_opts_help(stdout, usage, pf_opts, DL_ARRAY_SIZE(pf_opts));
        return 0;
    }
    if (st != DL_OK)
        return dl_status_exit_code(st);
    if (a.fleet)
        return fleet_main(&a, &ps, argc, argv);

    int rank, nranks;
    /* SINGLE, as sweep: any higher level turns Open MPI 4.1's internal
     * locking on, which slows the small collectives measured here. */
    if (dl_mpi_start(&argc, &argv, 0) != DL_OK) /* --backend mpi: its scopes measure MPI */
        return 3;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    pf_workers_t w;
    memset(&w, 0, sizeof(w));
    int code = pick(&a, &ps, &w, rank, nranks);
    if (code < 0) {
        dl_engine_signals_install();
        cJSON *doc = rank == 0 ? doc_new(&a, argc - 1, argv + 1) : NULL;
        st = dl_preflight_run(&ps.o, MPI_COMM_WORLD, doc);
        if (doc) {
            doc_backend(doc, &ps, &w);
            cJSON_AddItemToObject(doc, "fingerprint", w.fingerprint);
            w.fingerprint = NULL;
        }
        code = rank == 0 ? finish(&a, &ps, doc, st) : dl_status_exit_code(st);
        cJSON_Delete(doc);
    }
    if (w.be && dl_backend_has(w.be, DL_CAP_WORKER))
        workers_close(&w);
    cJSON_Delete(w.fingerprint);
    dl_record_free(&ps.baseline);
    free(ps.model_opts);
    MPI_Finalize();
    return code;
}

int cmd_preflight(int argc, char **argv)
{
    return dl_stdio_run(preflight_main, argc, argv, 0);
}
