/* dlcomm history DIR...: every run under the folders, grouped by hosts and
 * profile, as trends over time with version changes and the last run's
 * verdict against the one before. */
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "analysis/analysis.h"
#include "commands.h"

typedef struct {
    const char *html;
} history_opts_t;

#define O(f) offsetof(history_opts_t, f)
static const dl_opt_t history_opts[] = {
    {"html", 0, DL_OPT_STR, NULL, "FILE",
     "also write one self-contained HTML page with a chart per group", O(html), NULL},
};
DL_OPTS_EXPORT("history", history_opts, history_opts_t)
#undef O

static const char usage[] =
    "usage: dlcomm history [DIR...] [--html FILE]\n\n"
    "Every run found under the folders (default: results, where sweep writes; run.json,\n"
    "and nccl-tests output told by its\n"
    "content), grouped by hosts and profile and ordered by start: bandwidth at the\n"
    "smallest, a middle and the largest size over time, version changes (NCCL, CUDA,\n"
    "driver, MPI, kernel, tool) between consecutive runs, and the last run's verdict\n"
    "against the one before by compare's rule. Exit 0, or 2 on bad input.";

#define MAXDIRS 64

static int history_main(int argc, char **argv)
{
    history_opts_t o = {0};
    char *pos[MAXDIRS];
    int npos = 0;
    int code = dl_opts_command(history_opts, DL_ARRAY_SIZE(history_opts), &o, argc - 1, argv + 1,
                               pos, MAXDIRS, &npos, usage);
    if (code >= 0)
        return code;
    if (npos < 1) { /* where sweep writes by default, as run from the same folder */
        struct stat sb;
        if (stat("results", &sb) != 0) {
            dl_err("history: no results folder here (sweep writes results/<date>-<time>-<host>); "
                   "name the folders to read");
            return 2;
        }
        pos[npos++] = "results";
    }
    if (o.html && dl_an_html_check("--html", o.html) != DL_OK)
        return 2;
    dl_hist_t h;
    dl_status_t st = dl_an_history_load(pos, (size_t)npos, &h);
    if (st == DL_OK && o.html)
        st = dl_an_html_history(o.html, &h);
    if (st == DL_OK)
        st = dl_an_history_print(stdout, &h);
    dl_an_history_free(&h);
    return dl_status_exit_code(st);
}

int cmd_history(int argc, char **argv)
{
    return dl_stdio_run(history_main, argc, argv, 0);
}
