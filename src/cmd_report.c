/* dlcomm report RUN: peaks, sizes that reach 50% / 90% of them, latency
 * floors, the best profile per size band, crossovers and Horovod advice;
 * with --tune, or for a tune record, tune's measured answer. */
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/analysis.h"
#include "commands.h"
#include "sys/system.h"

typedef struct {
    int json;
    const char *baseline, *prometheus, *html, *system, *tune;
} report_opts_t;

#define O(f) offsetof(report_opts_t, f)
static const dl_opt_t report_opts[] = {
    {"json", 0, DL_OPT_FLAG, "0", NULL, "print JSON instead of text", O(json), NULL},
    {"baseline", 0, DL_OPT_STR, NULL, "RUN",
     "a single-node run, to judge hierarchical all-reduce for a multi-node RUN", O(baseline), NULL},
    {"prometheus", 0, DL_OPT_STR, NULL, "FILE",
     "also write RUN's figures for node_exporter's textfile collector", O(prometheus), NULL},
    {"html", 0, DL_OPT_STR, NULL, "FILE",
     "also write one self-contained HTML page: header, charts, these tables", O(html), NULL},
    {"system", 0, DL_OPT_STR, NULL, "NAME|FILE",
     "the system description of RUN's hardware, for the line rate in the charts "
     "(default: the one a sim run modelled)", O(system), NULL},
    {"tune", 0, DL_OPT_STR, NULL, "FILE",
     "a dlcomm tune record: say how the curve's fusion advice compares with its measured answer",
     O(tune), NULL},
};
DL_OPTS_EXPORT("report", report_opts, report_opts_t)
#undef O

static const char usage[] =
    "usage: dlcomm report RUN [--json] [--baseline RUN1] [--prometheus FILE] [--html FILE]\n"
    "       [--system NAME|FILE] [--tune FILE]\n\n"
    "RUN: dlcomm run.json, nccl-tests -J JSON or nccl-tests text output. Per collective\n"
    "and profile: peak busbw, the smallest sizes reaching 50% and 90% of it, the latency\n"
    "floor (fastest call up to 64 KiB); the best profile per size band (< 64 KiB,\n"
    "64 KiB - 16 MiB, >= 16 MiB: lowest geometric-mean time over the sizes all profiles\n"
    "measured); NCCL_ALGO/NCCL_PROTO crossovers; Horovod settings with their figures.\n"
    "--tune FILE: tune's measured answer beside the curve's (text, JSON, the HTML page).\n"
    "RUN may be a tune record itself (tune --json FILE): its recommendation, and its page.";

/* tune's answer as one JSON document; file: the tune record reported alone. */
static void print_tune_json(const char *file, const dl_tune_rep_t *t)
{
    cJSON *j = cJSON_CreateObject();
    if (file) {
        cJSON_AddStringToObject(j, "path", file);
        cJSON_AddStringToObject(j, "format", dl_fmt_name(DL_FMT_TUNE));
    }
    dl_an_tune_json(j, t);
    char *text = cJSON_Print(j);
    if (text)
        printf("%s\n", text);
    cJSON_free(text);
    cJSON_Delete(j);
}

/* RUN is a tune record itself (tune --json FILE): its page and its answer. */
static int report_tune_record(const report_opts_t *o, const char *file, const cJSON *tune)
{
    if (o->baseline || o->tune || o->prometheus) {
        dl_err("%s is a tune record: it is reported on its own (no --baseline, --tune or "
               "--prometheus; report SWEEP --tune %s compares a sweep with it)", file, file);
        return 2;
    }
    dl_tune_rep_t t;
    dl_status_t st = dl_an_tune_make(tune, NULL, &t);
    if (st == DL_OK && o->html)
        st = dl_an_html_tune(o->html, file, &t);
    if (st == DL_OK && o->json)
        print_tune_json(file, &t);
    else if (st == DL_OK) {
        printf("dlcomm report: %s (%s)\n", file, dl_fmt_name(DL_FMT_TUNE));
        dl_an_tune_print(stdout, &t);
    }
    dl_an_tune_free(&t);
    return dl_status_exit_code(st);
}

static int report_main(int argc, char **argv)
{
    report_opts_t o = {0};
    char *pos[1];
    int npos = 0;
    int code = dl_opts_command(report_opts, DL_ARRAY_SIZE(report_opts), &o, argc - 1, argv + 1,
                               pos, 1, &npos, usage);
    if (code >= 0)
        return code;
    if (npos != 1) {
        dl_err("report needs one run (see --help)");
        return 2;
    }
    dl_system_t sys;
    if (o.system && dl_system_load("--system", o.system, &sys) != DL_OK)
        return 2;
    if (o.html && dl_an_html_check("--html", o.html) != DL_OK)
        return 2;
    if (o.prometheus && dl_out_file_check("--prometheus", o.prometheus) != DL_OK)
        return 2;
    /* A tune run's run.json carries its own record; a tune record alone is no run. */
    int is_run = 0;
    cJSON *own = dl_record_read_tune(pos[0], &is_run);
    if (own && !is_run) {
        code = report_tune_record(&o, pos[0], own);
        cJSON_Delete(own);
        return code;
    }
    if (own && o.tune) {
        dl_err("%s is a tune run (it has its own record): give a sweep with --tune", pos[0]);
        cJSON_Delete(own);
        return 2;
    }
    dl_record_t r, b;
    int have_base = 0;
    dl_status_t st = dl_an_load(pos[0], &r); /* bad input 2, out of memory 3 */
    if (st != DL_OK) {
        cJSON_Delete(own);
        return dl_status_exit_code(st);
    }
    if (o.baseline) {
        if ((st = dl_an_load(o.baseline, &b)) != DL_OK) {
            cJSON_Delete(own);
            dl_record_free(&r);
            return dl_status_exit_code(st);
        }
        have_base = 1;
    }
    cJSON *tune = own;
    if (o.tune && !(tune = dl_record_read_tune(o.tune, NULL))) {
        dl_err("--tune %s: not a dlcomm tune record (tune --json, or its run.json)", o.tune);
        if (have_base)
            dl_record_free(&b);
        dl_record_free(&r);
        return 2;
    }
    /* A tune run's rows are its steps' calls, not a sweep: nothing to compare. */
    dl_tune_rep_t t;
    st = tune ? dl_an_tune_make(tune, own ? NULL : &r, &t) : DL_OK;
    if (st == DL_OK && o.prometheus)
        st = dl_an_prometheus(o.prometheus, &r);
    if (st == DL_OK && o.html) {
        dl_line_t line;
        dl_an_run_line(&r, o.system ? sys.file : NULL, &line);
        st = dl_an_html_report(o.html, &r, have_base ? &b : NULL, &line, tune ? &t : NULL);
    }
    if (st == DL_OK)
        st = dl_an_report(stdout, &r, have_base ? &b : NULL, o.json);
    if (st == DL_OK && tune && !o.json)
        dl_an_tune_print(stdout, &t);
    else if (st == DL_OK && tune) /* a second JSON document after the report's */
        print_tune_json(NULL, &t);
    if (tune)
        dl_an_tune_free(&t);
    cJSON_Delete(tune);
    if (have_base)
        dl_record_free(&b);
    dl_record_free(&r);
    return dl_status_exit_code(st);
}

int cmd_report(int argc, char **argv)
{
    return dl_stdio_run(report_main, argc, argv, 0);
}
