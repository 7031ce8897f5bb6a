/* dlcomm plot RUN...: busbw and time against size, through gnuplot. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/analysis.h"
#include "commands.h"

typedef struct {
    const char *out, *format;
} plot_opts_t;

static const char *const format_names[] = {"png", "svg"};
static const dl_choices_t formats = {.noun = "format", .names = format_names, .n = 2};

#define O(f) offsetof(plot_opts_t, f)
static const dl_opt_t plot_opts[] = {
    {"out", 0, DL_OPT_STR, NULL, "DIR", "where the charts go (default: the first RUN's folder)",
     O(out), NULL},
    {"format", 0, DL_OPT_STR, "png", "FMT", "the charts' image format", O(format), NULL,
     &formats},
};
DL_OPTS_EXPORT("plot", plot_opts, plot_opts_t)
#undef O

static const char usage[] =
    "usage: dlcomm plot RUN... [--out DIR] [--format png|svg]\n\n"
    "RUN: dlcomm run.json, nccl-tests -J JSON or nccl-tests text output. Two charts per\n"
    "collective, <collective>-busbw.FMT and <collective>-time.FMT: size on a log-2 axis,\n"
    "one line per profile (one run) or per run (several). The data (<collective>.dat)\n"
    "and the gnuplot script (plot.gp) stay beside them. A tune record (dlcomm tune --json,\n"
    "or its run.json) gives tune-exposed.FMT: exposed time per candidate, one line per\n"
    "profile. Needs gnuplot on PATH (exit 2 and nothing written without it).";

#define MAX_RUNS 32

static int plot_main(int argc, char **argv)
{
    plot_opts_t o = {0};
    char *pos[MAX_RUNS];
    int npos = 0;
    int code = dl_opts_command(plot_opts, DL_ARRAY_SIZE(plot_opts), &o, argc - 1, argv + 1,
                               pos, MAX_RUNS, &npos, usage);
    if (code >= 0)
        return code;
    if (npos == 0) {
        dl_err("plot needs at least one run (see --help)");
        return 2;
    }
    char exe[4096], dir[1024];
    if (dl_an_find_gnuplot(exe, sizeof(exe)) != DL_OK) {
        dl_err("gnuplot is not on PATH: install it (apt-get install gnuplot-nox); nothing written");
        return 2;
    }
    if (!o.out) { /* beside the first run */
        snprintf(dir, sizeof(dir), "%s", pos[0]);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof(dir), ".");
        o.out = dir;
    }
    cJSON *tune = dl_record_read_tune(pos[0], NULL);
    if (tune) { /* a tune record: its chart alone */
        dl_plot_opts_t po = {.outdir = o.out, .format = o.format};
        dl_status_t st = npos == 1 ? dl_an_plot_tune(tune, &po) : DL_ERR_USAGE;
        if (npos != 1)
            dl_err("a tune record is plotted on its own (one file)");
        else if (st == DL_OK)
            printf("# wrote %s/tune-exposed.%s\n", o.out, o.format);
        cJSON_Delete(tune);
        return dl_status_exit_code(st);
    }
    dl_record_t runs[MAX_RUNS];
    dl_record_t *pr[MAX_RUNS];
    dl_status_t st = DL_OK;
    int loaded = 0;
    for (; loaded < npos; loaded++) {
        if ((st = dl_an_load(pos[loaded], &runs[loaded])) != DL_OK)
            break;
        pr[loaded] = &runs[loaded];
    }
    if (st == DL_OK) {
        dl_plot_opts_t po = {.outdir = o.out, .format = o.format};
        st = dl_an_plot(pr, (size_t)npos, &po);
        if (st == DL_OK)
            printf("# wrote %s/<collective>-{busbw,time}.%s\n", o.out, o.format);
    }
    for (int i = 0; i < loaded; i++)
        dl_record_free(&runs[i]);
    return dl_status_exit_code(st);
}

int cmd_plot(int argc, char **argv)
{
    return dl_stdio_run(plot_main, argc, argv, 0);
}
