/* dlcomm compare BASE NEW: a noise-aware regression report with an exit
 * code for CI (0 nothing worse, 1 a regression, 2 bad input or nothing in
 * common). */
#include <stddef.h>
#include <string.h>

#include "analysis/analysis.h"
#include "commands.h"

typedef struct {
    double threshold;
    int metric, p50; /* dl_metric_t; dl_an_stat_choices' index (1: p50) */
    const char *json, *html;
    uint64_t min_size;
} compare_opts_t;

static const char *const metric_names[] = {"busbw", "time"}; /* dl_metric_t's order */
static const dl_choices_t metrics = {.noun = "metric", .names = metric_names, .n = 2};

#define O(f) offsetof(compare_opts_t, f)
static const dl_opt_t compare_opts[] = {
    {"threshold", 't', DL_OPT_DOUBLE, "5", "PCT", "a change smaller than PCT percent is unchanged",
     O(threshold), dl_opt_percent},
    {"metric", 'm', DL_OPT_ENUM, "busbw", "NAME",
     "what is judged (busbw falls back to time where it is 0: one rank)", O(metric), NULL,
     &metrics},
    {"stat", 0, DL_OPT_ENUM, "mean", "NAME",
     "judge the mean call (as nccl-tests) or the median one (robust to a preempted call on "
     "a busy host)", O(p50), NULL, &dl_an_stat_choices},
    {"min-size", 0, DL_OPT_SIZE, "1", "SIZE", "compare only sizes >= SIZE", O(min_size), NULL},
    {"json", 0, DL_OPT_STR, NULL, "FILE", "also write every pair and verdict as JSON", O(json), NULL},
    {"html", 0, DL_OPT_STR, NULL, "FILE",
     "also write one self-contained HTML page: verdict, differences, pairs, charts", O(html), NULL},
};
DL_OPTS_EXPORT("compare", compare_opts, compare_opts_t)
#undef O

static const char usage[] =
    "usage: dlcomm compare BASE NEW [options]\n\n"
    "BASE and NEW: dlcomm run.json, nccl-tests -J JSON or nccl-tests text output (told\n"
    "apart by content). Rows pair by profile, collective, dtype, op, placement, size and\n"
    "ranks. A pair is a regression when the metric is worse by more than --threshold AND\n"
    "the two mean times differ by more than sqrt(ci95_base^2 + ci95_new^2) (the combined\n"
    "95% confidence half-widths); a change past the threshold but inside that spread is\n"
    "noise. Rows without a spread (nccl-tests) are judged by the threshold alone.\n"
    "--stat p50 judges the median call instead, its spread taken as 1.25 x the mean's.\n"
    "Exit: 0 no regression, 1 a regression (or a profile that no longer finishes, or\n"
    "wrong elements in NEW),\n"
    "2 bad input or no rows in common.";

static int compare_main(int argc, char **argv)
{
    compare_opts_t o = {0};
    char *pos[2];
    int npos = 0;
    int code = dl_opts_command(compare_opts, DL_ARRAY_SIZE(compare_opts), &o, argc - 1, argv + 1,
                               pos, 2, &npos, usage);
    if (code >= 0)
        return code;
    dl_cmp_opts_t co = {.threshold = o.threshold / 100.0, .min_size = o.min_size,
                        .metric = (dl_metric_t)o.metric, .use_p50 = o.p50};
    if (npos != 2) {
        dl_err("compare needs two runs: BASE NEW (see --help)");
        return 2;
    }
    if (o.html && dl_an_html_check("--html", o.html) != DL_OK)
        return 2;
    if (o.json && dl_out_file_check("--json", o.json) != DL_OK)
        return 2;
    dl_record_t b, n;
    dl_status_t st = dl_an_load(pos[0], &b); /* bad input 2, out of memory 3 */
    if (st != DL_OK)
        return dl_status_exit_code(st);
    if ((st = dl_an_load(pos[1], &n)) != DL_OK) {
        dl_record_free(&b);
        return dl_status_exit_code(st);
    }
    for (int i = 0; i < 2; i++)
        if (dl_an_still_running(i ? &n : &b)) { /* not judged before it ends */
            dl_err("%s %s is still running (no exit code yet; the run writing it holds its "
                   "folder): compare it once it has finished", i ? "NEW" : "BASE", pos[i]);
            dl_record_free(&b);
            dl_record_free(&n);
            return 2;
        }
    dl_cmp_t c;
    code = 3;
    if (dl_an_compare(&b, &n, &co, &c) != DL_OK)
        goto out;
    code = 2;
    if (c.npairs == 0) {
        dl_err("%s and %s have no rows in common%s%s%s", pos[0], pos[1],
               c.small ? " at sizes >= --min-size" : " (profile, collective, dtype, op, size, ranks)",
               c.warnings[0] ? "; the runs differ: " : "", c.warnings);
        goto out;
    }
    st = o.json ? dl_an_cmp_json(o.json, &b, &n, &co, &c) : DL_OK;
    if (st == DL_OK && o.html)
        st = dl_an_html_compare(o.html, &b, &n, &co, &c);
    if (st != DL_OK) { /* checked before: what fails now is the writing (disk full): 3 */
        code = dl_status_exit_code(st);
        goto out;
    }
    dl_an_cmp_print(stdout, &b, &n, &co, &c);
    code = dl_an_cmp_regressed(&c);
out:
    dl_an_cmp_free(&c);
    dl_record_free(&b);
    dl_record_free(&n);
    return code;
}

int cmd_compare(int argc, char **argv)
{
    return dl_stdio_run(compare_main, argc, argv, 0);
}
