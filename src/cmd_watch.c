/* dlcomm watch: the scheduled health check, one shot per invocation (a
 * systemd timer or cron starts it; scripts/systemd/ has the units). It runs
 * a preflight and a short sweep through the launcher given after `--`
 * (mpirun ... as argv, this same executable re-run: no shell), keeps each
 * run in its own timestamped folder under --results, compares the sweep
 * with the newest earlier run that ended well, and exports all three to
 * node_exporter's textfile folder. Exit: the worst of its steps (0 ok, 1 a
 * check failed or a regression, 2 bad usage, 3 a step broke). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "analysis/analysis.h"
#include "backends/backends.h"
#include "commands.h"
#include "results/results.h"
#include "sys/lastwords.h"
#include "sys/launch.h"
#include "sys/launcher.h"
#include "version.h"


typedef struct {
    const char *results, *textfile, *sweep, *preflight;
    int p50; /* dl_an_stat_choices' index */
    double threshold;
    long keep;
} watch_opts_t;

#define O(f) offsetof(watch_opts_t, f)
static const dl_opt_t watch_opts[] = {
    {"results", 0, DL_OPT_STR, "results/watch", "DIR",
     "the series: each run in DIR/<UTC start>/ (preflight.json, sweep/run.json, compare.json, "
     "watch.json, logs)", O(results), NULL},
    {"textfile", 0, DL_OPT_STR, NULL, "DIR",
     "node_exporter's textfile folder: dlcomm-preflight.prom, dlcomm-sweep.prom and "
     "dlcomm-watch.prom go there", O(textfile), NULL},
    {"sweep", 0, DL_OPT_STR, "-c allreduce,allgather -b 1M -e 64M --placement out -q", "ARGS",
     "the sweep's options, split at spaces (no quoting; watch sets --out and --prometheus)",
     O(sweep), NULL},
    {"preflight", 0, DL_OPT_STR, "--quick", "ARGS",
     "the preflight's options, split at spaces (watch sets --json and --prometheus)",
     O(preflight), NULL},
    {"threshold", 't', DL_OPT_DOUBLE, "5", "PCT", "compare: a change smaller than PCT percent is unchanged",
     O(threshold), dl_opt_percent},
    {"stat", 0, DL_OPT_ENUM, "mean", "NAME",
     "compare: the mean call or the median one (robust to a preempted call on a busy host)",
     O(p50), NULL, &dl_an_stat_choices},
    {"keep", 0, DL_OPT_INT, "0", "N",
     "keep the newest N run folders, and the one compared against (0: keep all)", O(keep),
     dl_opt_nonneg_long},
};
DL_OPTS_EXPORT("watch", watch_opts, watch_opts_t)
#undef O

static const char usage[] =
    "usage: dlcomm watch [options] [-- LAUNCHER...]\n\n"
    "One health check, as a timer runs it: a preflight, then a sweep, each started as\n"
    "LAUNCHER dlcomm preflight|sweep ... (e.g. -- mpirun -np 16 --hostfile FILE; no\n"
    "launcher: one process each), kept in a new folder --results/<UTC start>/. The sweep is\n"
    "compared with the newest earlier run there whose check ended 0; a regression (as\n"
    "dlcomm compare judges it) fails the check. With --textfile, the preflight's verdict,\n"
    "the sweep's figures and this check's outcome are written for node_exporter.\n"
    "Exit: 0 all good (or nothing to compare yet), 1 a check failed or a regression,\n"
    "2 bad usage, 3 a step broke or could not start.";

typedef struct {
    watch_opts_t o;
    char **launcher;
    int nlauncher;
    char exe[PATH_MAX];
    char name[64], dir[PATH_MAX], prev[64]; /* this run, and the one compared with */
    int pf_code, sw_code, compared, gauged;
    int stopped; /* the signal a step was stopped by: watch ends there */
    size_t regressions;
    cJSON *sum; /* watch.json */
} watch_t;

/* Words of s split at blanks, appended to argv (a NULL-ended vector). */
static int split_into(char **argv, int n, int max, char *s)
{
    char *save = NULL;
    for (char *t = strtok_r(s, " \t\n", &save); t && n < max; t = strtok_r(NULL, " \t\n", &save))
        argv[n++] = t;
    return n;
}

/* A step's words checked with that command's own option table, as the
 * step will parse them (its backends' rows too): an unknown option or a
 * bad value is refused before any step runs. The options watch sets
 * itself are FIXED rows there. */
static dl_status_t check_args(const char *cmd, const char *args, const char *const *mine,
                              const char *why)
{
    const dl_opt_table_t *t = dl_opt_table_find(cmd);
    dl_optset_t set;
    dl_status_t st = !t ? DL_ERR_INTERNAL
                     : t->plugins ? dl_backend_optset(&set, t->opts, t->n, t->size)
                                  : dl_optset_init(&set, t->opts, t->n, t->size, NULL, NULL, NULL, 0);
    for (; st == DL_OK && *mine; mine++)
        st = dl_optset_fix(&set, *mine, why);
    char buf[4096], *words[256];
    snprintf(buf, sizeof(buf), "%s", args);
    int n = split_into(words, 0, 256, buf), help = 0;
    char context[32];
    snprintf(context, sizeof(context), "--%s", cmd); /* whose words the line is about */
    dl_log_set_context(context);
    if (st == DL_OK)
        st = dl_opts_parse(set.opts, set.n, set.target, n, words, NULL, 0, NULL, &help);
    dl_log_set_context(NULL);
    dl_optset_free(&set);
    return st;
}

static const char *const sweep_own[] = {"out", "prometheus", "overwrite", NULL};
static const char *const pf_own[] = {"json", "prometheus", NULL};

static dl_status_t setup(watch_t *w)
{
    if (!w->o.results[0]) {
        dl_err("--results: give a folder");
        return DL_ERR_USAGE;
    }
    if (w->o.textfile) {
        struct stat sb;
        if (stat(w->o.textfile, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
            dl_dir_writable(w->o.textfile) != DL_OK) {
            dl_err("--textfile %s: not a folder that exists and can be written", w->o.textfile);
            return DL_ERR_USAGE;
        }
    }
    if (check_args("sweep", w->o.sweep, sweep_own,
                   "set by watch: the sweep's folder and textfile are the run's") != DL_OK ||
        check_args("preflight", w->o.preflight, pf_own,
                   "set by watch: the preflight's JSON and textfile are the run's") != DL_OK)
        return DL_ERR_USAGE;
    int np = dl_launcher_size();
    if (np > 1) {
        dl_err("watch runs once, not in each of %d ranks: give the launcher after -- "
               "(dlcomm watch -- mpirun -np %d ...)", np, np);
        return DL_ERR_USAGE;
    }
    ssize_t l = readlink("/proc/self/exe", w->exe, sizeof(w->exe) - 1);
    if (l <= 0) {
        dl_err("cannot find this program (/proc/self/exe): %s", strerror(errno));
        return DL_ERR_INTERNAL;
    }
    w->exe[l] = '\0';
    return DL_OK;
}

/* ---- the steps: LAUNCHER dlcomm CMD ARGS..., output to a log and stdout ---- */

static void step_echo(const char *buf, size_t n, void *arg)
{
    fwrite(buf, 1, n, (FILE *)arg);
    fwrite(buf, 1, n, stdout);
    fflush(stdout);
}

/* The step's code is dlcomm's (src/sys/launch.h): rank 0's own, not
 * mpirun's 1 after a signal; a launcher that failed or was killed is a
 * step that broke. */
static int run_step(watch_t *w, const char *step, char **argv)
{
    char logpath[PATH_MAX + 16];
    snprintf(logpath, sizeof(logpath), "%s/%s.log", w->dir, step);
    /* The run's folder is new (dl_series_new): the log is made there, never
     * opened through a link. */
    int fd = open(logpath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *log = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!log) {
        if (fd >= 0)
            close(fd);
        dl_err("watch: cannot write %s: %s", logpath, strerror(errno));
        return 3;
    }
    printf("watch: %s:", step);
    for (char **a = argv; *a; a++)
        printf(" %s", *a);
    printf("\n");
    fflush(stdout);
    dl_launch_t r;
    dl_launch_run(argv, step_echo, log, &r);
    fclose(log);
    if (r.signalled)
        w->stopped = r.signalled;
    char how[128];
    dl_launch_describe(&r, how, sizeof(how));
    if (!r.started)
        dl_err("watch: %s: cannot start %s: %s", step, argv[0], strerror(r.err));
    else if (r.code == 2) /* the step said why on its own stderr, into the log */
        dl_err("watch: %s: bad usage or input (exit 2; its words are in %s)", step, logpath);
    else if (r.noted < 0 && r.code == 3 &&
             (WIFSIGNALED(r.status) || WEXITSTATUS(r.status) != 3))
        dl_err("watch: %s: the launcher %s", step, how);
    return r.started ? r.code : 3;
}

static int step(watch_t *w, const char *cmd, const char *args, const char *const *extra)
{
    char buf[4096], *argv[512];
    int n = 0;
    for (int i = 0; i < w->nlauncher && n < 200; i++)
        argv[n++] = w->launcher[i];
    argv[n++] = w->exe;
    argv[n++] = (char *)cmd;
    snprintf(buf, sizeof(buf), "%s", args);
    n = split_into(argv, n, 480, buf);
    for (; *extra && n < 510; extra++)
        argv[n++] = (char *)*extra;
    argv[n] = NULL;
    return run_step(w, cmd, argv);
}

/* A step's own output: the option, its path in the run folder, and the
 * textfile it writes for node_exporter. */
static int run_dlcomm(watch_t *w, const char *cmd, const char *args, const char *out_opt,
                      const char *out, const char *prom_file)
{
    char path[PATH_MAX + 32], prom[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", w->dir, out);
    const char *extra[5] = {out_opt, path, NULL, NULL, NULL};
    if (w->o.textfile) {
        snprintf(prom, sizeof(prom), "%s/%s", w->o.textfile, prom_file);
        extra[2] = "--prometheus";
        extra[3] = prom;
    }
    return step(w, cmd, args, extra);
}

/* ---- the series: what this run is compared with ---- */

static cJSON *read_json(const char *path)
{
    char *buf;
    size_t len;
    if (dl_read_file(path, &buf, &len) != DL_OK)
        return NULL;
    cJSON *j = dl_json_parse_whole(buf, len);
    free(buf);
    return j;
}

static void find_previous(watch_t *w)
{
    dl_series_last_ok(w->o.results, w->name, w->prev, sizeof(w->prev));
}

static void keep_newest(const watch_t *w)
{
    if (w->o.keep > 0)
        dl_series_keep(w->o.results, (int)w->o.keep, w->name, w->prev);
}

static int worst(int a, int b)
{
    return a > b ? a : b;
}

/* ---- what a run says: the comparison, watch.json, dlcomm-watch.prom ---- */

static void regression_gauges(dl_prom_t *p, const dl_cmp_t *c)
{
    dl_prom_gauge(p, "dlcomm_compare_regression_ratio",
                  "How much worse a row of the last watch's sweep is than the run compared "
                  "with (0.2: 20% worse), for the rows judged a regression");
    size_t nv = 0;
    const dl_pair_t **v = c ? dl_an_cmp_sorted(c, 0, &nv) : NULL;
    for (size_t i = 0; v && i < nv; i++) {
        const dl_row_t *r = v[i]->cur;
        if (v[i]->verdict != DL_V_REGRESSION)
            continue;
        char bytes[32], ranks[16];
        snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)r->bytes);
        snprintf(ranks, sizeof(ranks), "%d", r->ranks);
        dl_prom_sample(p, "dlcomm_compare_regression_ratio", v[i]->change, "profile", r->profile,
                       "collective", r->collective, "dtype", r->dtype, "op", r->op, "placement",
                       r->placement, "bytes", bytes, "ranks", ranks, NULL);
    }
    free((void *)v);
}

static int judge(watch_t *w, dl_prom_t *p, const dl_record_t *b, const dl_record_t *n,
                 const dl_cmp_opts_t *co, const dl_cmp_t *c, const char *json)
{
    regression_gauges(p, c);
    w->gauged = 1;
    if (c->npairs == 0) {
        printf("watch: nothing to compare: no rows in common with %s/%s (were the sweep's "
               "options changed?)\n", w->o.results, w->prev);
        return 0;
    }
    w->compared = 1;
    printf("watch: compared with %s/%s:\n", w->o.results, w->prev);
    dl_an_cmp_print(stdout, b, n, co, c);
    w->regressions = c->count[DL_V_REGRESSION] + c->failed + c->wrong_rows;
    if (dl_an_cmp_json(json, b, n, co, c) != DL_OK)
        return 3;
    if (!dl_an_cmp_regressed(c))
        return 0;
    printf("watch: REGRESSION: %zu rows worse, %zu profiles no longer finish, %zu rows with "
           "wrong elements, against %s/%s\n", c->count[DL_V_REGRESSION], c->failed,
           c->wrong_rows, w->o.results, w->prev);
    return 1;
}

static cJSON *step_json(cJSON *steps, const char *name, int code)
{
    cJSON *s = cJSON_AddObjectToObject(steps, name);
    cJSON_AddNumberToObject(s, "exit_code", code);
    return s;
}

/* The preflight's verdict, as its JSON says (absent: it never got there). */
static void verdict_json(const watch_t *w, cJSON *s)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/preflight.json", w->dir);
    cJSON *pf = read_json(path);
    cJSON *v = cJSON_DetachItemFromObject(pf, "verdict");
    cJSON_AddItemToObject(s, "verdict", v ? v : cJSON_CreateNull());
    cJSON_AddStringToObject(s, "json", "preflight.json");
    cJSON_Delete(pf);
}

static cJSON *summary(const watch_t *w, int code, time_t t0)
{
    char iso[32];
    struct tm tm;
    strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t0, &tm));
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "schema", 1);
    cJSON_AddStringToObject(d, "kind", "watch");
    cJSON_AddStringToObject(d, "tool_version", dl_version());
    cJSON_AddStringToObject(d, "started", iso);
    cJSON_AddNumberToObject(d, "elapsed_s", (double)(time(NULL) - t0));
    cJSON *l = cJSON_AddArrayToObject(d, "launcher");
    for (int i = 0; i < w->nlauncher; i++)
        cJSON_AddItemToArray(l, cJSON_CreateString(w->launcher[i]));
    dl_opts_echo(watch_opts, DL_ARRAY_SIZE(watch_opts), &w->o, cJSON_AddObjectToObject(d, "options"));
    cJSON *steps = cJSON_AddObjectToObject(d, "steps");
    verdict_json(w, step_json(steps, "preflight", w->pf_code));
    cJSON *sw = step_json(steps, "sweep", w->sw_code);
    char swdir[PATH_MAX + 16];
    snprintf(swdir, sizeof(swdir), "%s/sweep", w->dir);
    if (access(swdir, F_OK) == 0) /* its folder exists: the sweep began */
        cJSON_AddStringToObject(sw, "run", "sweep/run.json");
    if (w->stopped)
        cJSON_AddStringToObject(d, "interrupted_by", dl_lw_signame(w->stopped));
    cJSON *c = cJSON_AddObjectToObject(steps, "compare");
    if (w->prev[0])
        cJSON_AddStringToObject(c, "against", w->prev);
    else
        cJSON_AddNullToObject(c, "against");
    cJSON_AddBoolToObject(c, "compared", w->compared);
    cJSON_AddNumberToObject(c, "regressions", (double)w->regressions);
    cJSON_AddNumberToObject(d, "exit_code", code);
    return d;
}

static void outcome_gauges(const watch_t *w, dl_prom_t *p, int code)
{
    dl_prom_gauge(p, "dlcomm_watch_timestamp_seconds",
                  "When the last dlcomm watch ended, seconds since the epoch");
    dl_prom_sample(p, "dlcomm_watch_timestamp_seconds", (double)time(NULL), NULL);
    dl_prom_gauge(p, "dlcomm_watch_exit_code",
                  "Exit code of the last dlcomm watch: 0 ok, 1 a check failed or a regression, "
                  "2 bad usage, 3 a step broke");
    dl_prom_sample(p, "dlcomm_watch_exit_code", code, NULL);
    dl_prom_gauge(p, "dlcomm_watch_step_exit_code", "Exit code of each step of the last watch");
    dl_prom_sample(p, "dlcomm_watch_step_exit_code", w->pf_code, "step", "preflight", NULL);
    dl_prom_sample(p, "dlcomm_watch_step_exit_code", w->sw_code, "step", "sweep", NULL);
    dl_prom_gauge(p, "dlcomm_watch_compared",
                  "1 when the last watch's sweep was compared with an earlier run, 0 when "
                  "there was none to compare with");
    dl_prom_sample(p, "dlcomm_watch_compared", w->compared, NULL);
    dl_prom_gauge(p, "dlcomm_watch_regressions",
                  "Rows worse, profiles no longer finishing and rows with wrong elements in the "
                  "last watch's comparison");
    dl_prom_sample(p, "dlcomm_watch_regressions", (double)w->regressions, NULL);
}

/* watch.json in the run folder, the gauges in the textfile folder, and the
 * last line; the exit code, worse if either could not be written. */
static int finish(watch_t *w, dl_prom_t *p, int code, time_t t0)
{
    char path[PATH_MAX + 32];
    cJSON *d = summary(w, code, t0);
    char *s = cJSON_Print(d);
    snprintf(path, sizeof(path), "%s/watch.json", w->dir);
    dl_status_t st = s ? dl_write_atomic(path, s, strlen(s)) : DL_ERR_NOMEM;
    cJSON_free(s);
    cJSON_Delete(d);
    if (!w->gauged) /* no samples, but the family is there */
        regression_gauges(p, NULL);
    outcome_gauges(w, p, code);
    if (w->o.textfile) {
        snprintf(path, sizeof(path), "%s/dlcomm-watch.prom", w->o.textfile);
        st = dl_status_worse(st, dl_prom_write(p, path));
    } else {
        dl_prom_free(p);
    }
    printf("watch: exit %d: preflight exit %d, sweep exit %d, %s; kept in %s\n", code,
           w->pf_code, w->sw_code,
           !w->compared ? "nothing compared"
           : w->regressions ? "regressions found" : "no regression", w->dir);
    return st == DL_OK ? code : worst(code, dl_status_exit_code(st));
}

/* Exit code of the comparison: 1 a regression, else 0 (also when there was
 * nothing to compare, which it says). */
static int compare_step(watch_t *w, dl_prom_t *p)
{
    char base[PATH_MAX + 128], cur[PATH_MAX + 32], json[PATH_MAX + 32];
    if (!w->prev[0]) {
        printf("watch: nothing to compare: no earlier run in %s ended ok\n", w->o.results);
        return 0;
    }
    snprintf(base, sizeof(base), "%s/%s/sweep/run.json", w->o.results, w->prev);
    snprintf(cur, sizeof(cur), "%s/sweep/run.json", w->dir);
    snprintf(json, sizeof(json), "%s/compare.json", w->dir);
    dl_record_t b, n;
    if (dl_an_load(base, &b) != DL_OK)
        return 3;
    if (dl_an_load(cur, &n) != DL_OK) {
        dl_record_free(&b);
        return 3;
    }
    dl_cmp_opts_t co = {.threshold = w->o.threshold / 100.0, .metric = DL_M_BUSBW, .min_size = 1,
                        .use_p50 = w->o.p50};
    dl_cmp_t c;
    int code = 3;
    if (dl_an_compare(&b, &n, &co, &c) == DL_OK) {
        code = judge(w, p, &b, &n, &co, &c, json);
        dl_an_cmp_free(&c);
    }
    dl_record_free(&b);
    dl_record_free(&n);
    return code;
}

static int watch_run(watch_t *w)
{
    int fd = -1;
    if (dl_series_lock(w->o.results, &fd) != DL_OK)
        return 2;
    int code = 3;
    if (dl_series_new(w->o.results, w->name, sizeof(w->name)) != DL_OK)
        goto out;
    snprintf(w->dir, sizeof(w->dir), "%s/%s", w->o.results, w->name);
    printf("watch: this run: %s\n", w->dir);
    find_previous(w);
    time_t t0 = time(NULL);
    w->pf_code = run_dlcomm(w, "preflight", w->o.preflight, "--json", "preflight.json",
                            "dlcomm-preflight.prom");
    if (w->stopped) {
        printf("watch: stopped by %s during the preflight: the sweep is not run\n",
               dl_lw_signame(w->stopped));
        w->sw_code = 3;
    } else if (w->pf_code == 2) { /* --preflight's options are wrong: so is this check */
        printf("watch: the preflight's options were refused: the sweep is not run\n");
        w->sw_code = 2;
    } else {
        w->sw_code = run_dlcomm(w, "sweep", w->o.sweep, "--out", "sweep", "dlcomm-sweep.prom");
    }
    dl_prom_t *p = dl_prom_new();
    int cmp = 0;
    if (w->stopped)
        printf("watch: stopped by %s: nothing compared\n", dl_lw_signame(w->stopped));
    else if (w->pf_code == 2)
        printf("watch: nothing compared\n");
    else if (w->sw_code <= 1)
        cmp = compare_step(w, p);
    else
        printf("watch: the sweep did not finish (exit %d): nothing compared\n", w->sw_code);
    code = worst(worst(w->pf_code, w->sw_code), cmp);
    code = finish(w, p, code, t0);
    keep_newest(w);
out:
    close(fd);
    return code;
}

static int watch_main(int argc, char **argv)
{
    watch_t w;
    memset(&w, 0, sizeof(w));
    int end = argc; /* argv after -- is the launcher */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            end = i;
            w.launcher = argv + i + 1;
            w.nlauncher = argc - i - 1;
            break;
        }
    int code = dl_opts_command(watch_opts, DL_ARRAY_SIZE(watch_opts), &w.o, end - 1, argv + 1,
                               NULL, 0, NULL, usage);
    if (code >= 0)
        return code;
    if (setup(&w) != DL_OK)
        return 2;
    return watch_run(&w);
}

/* watch.json holds the record: its lines on stdout are a view of it. */
int cmd_watch(int argc, char **argv) { return dl_stdio_run(watch_main, argc, argv, 1); }
