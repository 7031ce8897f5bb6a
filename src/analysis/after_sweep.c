/* What a sweep does with its run once run.json is written (rank 0 only):
 * charts into the run folder (--plot), the Prometheus file (--prometheus),
 * the HTML page (--html; a tune run's with tune's answer). */
#include "analysis.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

dl_status_t dl_an_after_sweep(const char *dir, int plot, const char *prom, const char *html)
{
    if (!plot && !prom && !html)
        return DL_OK;
    char path[1100];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    dl_record_t r;
    dl_status_t st = dl_an_load(path, &r);
    if (st != DL_OK)
        return st;
    if (prom)
        st = dl_an_prometheus(prom, &r);
    if (html) { /* the line rate of the system a sim run modelled; a tune run's answer */
        dl_line_t line;
        dl_an_run_line(&r, NULL, &line);
        cJSON *tune = dl_record_read_tune(path, NULL);
        dl_tune_rep_t t;
        dl_status_t ts = tune ? dl_an_tune_make(tune, NULL, &t) : DL_OK;
        st = dl_status_worse(st, ts != DL_OK ? ts
                                 : dl_an_html_report(html, &r, NULL, &line, tune ? &t : NULL));
        if (tune)
            dl_an_tune_free(&t);
        cJSON_Delete(tune);
    }
    if (plot) {
        dl_record_t *runs[1] = {&r};
        dl_plot_opts_t o = {.outdir = dir, .format = "png"};
        st = dl_status_worse(st, dl_an_plot(runs, 1, &o));
    }
    dl_record_free(&r);
    return st;
}

/* The length of a path without its trailing slashes ("run/" is "run"). */
static size_t path_len(const char *p)
{
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        n--;
    return n;
}

/* A file option naming the run folder itself, which the sweep makes later. */
static int names_outdir(const char *opt, const char *path, const char *outdir)
{
    size_t n = path_len(path);
    if (!outdir || n != path_len(outdir) || strncmp(path, outdir, n) != 0)
        return 0;
    dl_err("%s %s: that is the --out folder; name a file", opt, path);
    return 1;
}

/* Checked before the sweep measures anything, so a missing gnuplot or an
 * unwritable Prometheus folder costs no run. */
dl_status_t dl_an_sweep_check(int plot, const char *prom, const char *html, const char *outdir)
{
    if ((prom && names_outdir("--prometheus", prom, outdir)) ||
        (html && names_outdir("--html", html, outdir)))
        return DL_ERR_USAGE;
    char buf[4096];
    if (plot && dl_an_find_gnuplot(buf, sizeof(buf)) != DL_OK) {
        dl_err("--plot: gnuplot is not on PATH (apt-get install gnuplot-nox)");
        return DL_ERR_UNAVAILABLE;
    }
    if (prom) {
        const char *slash = strrchr(prom, '/');
        if (!slash)
            snprintf(buf, sizeof(buf), ".");
        else
            snprintf(buf, sizeof(buf), "%.*s", slash == prom ? 1 : (int)(slash - prom), prom);
        /* The run folder itself is made by the sweep: a file in it is fine. */
        size_t ol = outdir ? path_len(outdir) : 0;
        int in_out = outdir && strlen(buf) == ol && strncmp(buf, outdir, ol) == 0;
        struct stat sb; /* what is there already must be a file it may replace */
        if (!prom[0] || (slash && !slash[1]) || (!in_out && dl_dir_writable(buf) != DL_OK) ||
            (lstat(prom, &sb) == 0 && !S_ISREG(sb.st_mode))) {
            dl_err("--prometheus %s: not a file in a folder that exists and can be written", prom);
            return DL_ERR_USAGE;
        }
    }
    return DL_OK;
}
