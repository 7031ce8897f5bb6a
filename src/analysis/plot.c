/* plot: gnuplot charts of busbw and time against size. Data go to files in
 * the output folder (<coll>.dat, one block per line of the chart), the
 * script to plot.gp; gnuplot runs as a process with the script as its
 * argument, never through a shell. Charts are drawn to hidden temporary
 * names and renamed once gnuplot has succeeded, so a failure leaves none. */
#include "analysis.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

dl_status_t dl_an_find_gnuplot(char *buf, size_t len)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        if (n > 0 && (size_t)snprintf(buf, len, "%.*s/gnuplot", (int)n, path) < len &&
            access(buf, X_OK) == 0)
            return DL_OK;
        path += n + (end ? 1 : 0);
    }
    return DL_ERR_UNAVAILABLE;
}

/* The rows one line of a chart shows: a run's profile, one dtype and op,
 * out-of-place when there is any (nccl-tests' in-place figures on one GPU
 * measure nothing). */
typedef struct {
    const dl_record_t *run;
    char profile[64], dtype[16], op[16], place[8];
    int group; /* --split: the first group's rows stand for the run */
} series_t;

static int row_in(const dl_row_t *r, const series_t *s, const char *coll)
{
    return !strcmp(r->profile, s->profile) && !strcmp(r->collective, coll) &&
           !strcmp(r->dtype, s->dtype) && !strcmp(r->op, s->op) && !strcmp(r->placement, s->place) &&
           r->group == s->group;
}

/* Picks dtype/op/placement for a profile's rows of coll: float32, sum, out first. */
static int pick(const dl_record_t *run, const char *profile, const char *coll, series_t *s)
{
    int best = -1;
    for (size_t i = 0; i < run->nrows; i++) {
        const dl_row_t *r = &run->rows[i];
        if (strcmp(r->profile, profile) || strcmp(r->collective, coll) || !(r->time_us > 0))
            continue;
        int score = 4 * !strcmp(r->dtype, "float32") + 2 * (!strcmp(r->op, "sum") ||
                    !strcmp(r->op, "none")) + !strcmp(r->placement, "out");
        if (score > best) {
            best = score;
            s->run = run;
            snprintf(s->profile, sizeof(s->profile), "%s", profile);
            snprintf(s->dtype, sizeof(s->dtype), "%s", r->dtype);
            snprintf(s->op, sizeof(s->op), "%s", r->op);
            snprintf(s->place, sizeof(s->place), "%s", r->placement);
            s->group = r->group;
        }
    }
    return best >= 0;
}

static int cmp_bytes(const void *a, const void *b)
{
    uint64_t x = (*(const dl_row_t *const *)a)->bytes, y = (*(const dl_row_t *const *)b)->bytes;
    return x < y ? -1 : x > y;
}

#define DL_PLOT_MAX 1e30

/* Writes one block per series: "bytes bandwidth time_us", by size. */
static dl_status_t write_data(const char *path, const series_t *s, size_t ns, const char *coll,
                              int use_algbw, uint64_t *lo, uint64_t *hi)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    dl_status_t st = buf ? DL_OK : DL_ERR_NOMEM;
    for (size_t k = 0; k < ns && st == DL_OK; k++) {
        const dl_record_t *run = s[k].run;
        const dl_row_t **v = malloc((run->nrows + 1) * sizeof(*v));
        size_t n = 0;
        if (!v) {
            st = DL_ERR_NOMEM;
            break;
        }
        /* Only figures a chart can draw: gnuplot's axes end near 1e300,
         * so a time or bandwidth beyond DL_PLOT_MAX is left out like an
         * unknown one. */
        for (size_t i = 0; i < run->nrows; i++) {
            const dl_row_t *r = &run->rows[i];
            double bw = use_algbw ? r->algbw : r->busbw;
            if (row_in(r, &s[k], coll) && r->time_us > 0 && r->time_us < DL_PLOT_MAX &&
                !(isfinite(bw) && fabs(bw) >= DL_PLOT_MAX))
                v[n++] = r;
        }
        qsort(v, n, sizeof(*v), cmp_bytes);
        for (size_t i = 0; i <= n; i++) {
            if (len + 128 > cap && !(buf = realloc(buf, cap *= 2))) {
                st = DL_ERR_NOMEM;
                break;
            }
            if (i == n) {
                len += (size_t)sprintf(buf + len, "%s\n\n", n ? "" : "nan nan nan\n");
                break;
            }
            double bw = use_algbw ? v[i]->algbw : v[i]->busbw;
            len += (size_t)sprintf(buf + len, "%llu %.6g %.6g\n", (unsigned long long)v[i]->bytes,
                                   isfinite(bw) ? bw : 0.0, v[i]->time_us);
            *lo = v[i]->bytes && v[i]->bytes < *lo ? v[i]->bytes : *lo;
            *hi = v[i]->bytes > *hi ? v[i]->bytes : *hi;
        }
        free(v);
    }
    if (st == DL_OK)
        st = dl_write_atomic(path, buf, len);
    free(buf);
    return st;
}

/* A gnuplot double-quoted string: backslash and quote escaped, a newline
 * as gnuplot's \\n, and no backquote (gnuplot would run its contents as
 * a command); nothing in a profile name can end the string or the command. */
static void gp_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '\n')
            fputs("\\n", f);
        else if (*s == '`')
            fputc('\'', f);
        else if (*s != '\r') {
            if (*s == '"' || *s == '\\')
                fputc('\\', f);
            fputc(*s, f);
        }
    }
    fputc('"', f);
}

/* Powers of two labelled in binary units: all of them for short ranges,
 * else every other or every fifth exponent (keeping 1 KiB, 1 MiB, 1 GiB). */
static void gp_xtics(FILE *f, uint64_t lo, uint64_t hi)
{
    int e0 = (int)floor(log2((double)lo)), e1 = (int)ceil(log2((double)hi));
    int span = e1 - e0, step = span <= 12 ? 1 : span <= 24 ? 2 : 5;
    fprintf(f, "set xtics (");
    for (int e = e0, first = 1; e <= e1 && e < 64; e++) {
        if ((e != e0 || (step > 1 && (e0 + 1) % step == 0)) && e % step)
            continue; /* the smallest size is labelled unless a label sits next to it */
        char lbl[32];
        dl_size_format((uint64_t)1 << e, lbl, sizeof(lbl));
        fprintf(f, "%s\"%s\" %llu", first ? "" : ", ", lbl, (unsigned long long)1 << e);
        first = 0;
    }
    /* A little room at both ends: gnuplot drops a tic that sits on the border. */
    fprintf(f, ")\nset xrange [%g:%g]\n", ldexp(0.9, e0 > 0 ? e0 : 0), ldexp(1.1, e1 < 63 ? e1 : 63));
}

static void series_label(const series_t *s, int nruns, int nprof_here, char *buf, size_t len)
{
    const dl_record_t *r = s->run;
    if (nruns == 1) {
        snprintf(buf, len, "%s%s", s->profile, r->nrows && r->rows[0].modelled ? " (modelled)" : "");
        return;
    }
    /* A run is known by its folder (run.json) or its file name. */
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s", r->path);
    char *slash = strrchr(tmp, '/');
    const char *name = slash ? slash + 1 : tmp;
    if (slash && strcmp(name, "run.json") == 0) {
        *slash = '\0';
        slash = strrchr(tmp, '/');
        name = slash ? slash + 1 : tmp;
    }
    if (nprof_here > 1)
        snprintf(buf, len, "%.80s: %.60s", name, s->profile);
    else
        snprintf(buf, len, "%.150s", name);
}

static void file_name(const char *coll, char *out, size_t len);

typedef struct {
    dl_record_t *const *runs;
    size_t nruns;
    const dl_plot_opts_t *o;
    FILE *gp;
    char (*tmp)[1024]; /* temporary chart paths, renamed at the end */
    char (*fin)[1024];
    size_t ncharts;
} plot_ctx_t;

/* Series of one collective: each run's profiles in order of appearance. */
static size_t collect(const plot_ctx_t *c, const char *coll, series_t *s, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < c->nruns; k++) {
        const dl_record_t *r = c->runs[k];
        for (size_t i = 0; i < r->nrows && n < max; i++) {
            int seen = 0;
            for (size_t j = 0; j < n && !seen; j++)
                seen = s[j].run == r && !strcmp(s[j].profile, r->rows[i].profile);
            if (!seen && !strcmp(r->rows[i].collective, coll) && pick(r, r->rows[i].profile, coll, &s[n]))
                n++;
        }
    }
    return n;
}

/* gnuplot opens its output by name and follows a link planted there: it
 * writes into a file made here first, under a name no one can guess
 * (mkstemp, O_EXCL), renamed into place once it succeeded. */
static void gnuplot_output(char *buf, size_t len, const char *dir, const char *stem)
{
    snprintf(buf, len, "%s/.%s.XXXXXX", dir, stem);
    int fd = mkstemp(buf);
    if (fd < 0)
        return; /* the name left with its X's: gnuplot fails to write, and says so */
    if (fchmod(fd, 0644) != 0) { /* as dl_write_atomic leaves a file */
        close(fd);
        unlink(buf);
        return;
    }
    close(fd);
}

static void chart(plot_ctx_t *c, const char *coll, const char *metric, const char *dat,
                  const series_t *s, size_t ns, const char *title, const char *ylabel)
{
    const char *fmt = c->o->format;
    FILE *f = c->gp;
    char fn[32];
    file_name(coll, fn, sizeof(fn));
    snprintf(c->fin[c->ncharts], 1024, "%s/%s-%s.%s", c->o->outdir, fn, metric, fmt);
    char stem[96];
    snprintf(stem, sizeof(stem), "%s-%s.%s", fn, metric, fmt);
    gnuplot_output(c->tmp[c->ncharts], 1024, c->o->outdir, stem);
    fprintf(f, strcmp(fmt, "svg") == 0 ? "set terminal svg size 1000,600 dynamic noenhanced\n"
                                       : "set terminal pngcairo size 1000,600 noenhanced\n");
    fprintf(f, "set output ");
    gp_str(f, c->tmp[c->ncharts++]);
    fprintf(f, "\nset title ");
    gp_str(f, title);
    fprintf(f, "\nset ylabel ");
    gp_str(f, ylabel);
    fprintf(f, "\n%s\nplot ", strcmp(metric, "time") == 0 ? "set logscale y 10" : "unset logscale y");
    for (size_t k = 0; k < ns; k++) {
        char lbl[160];
        int nprof = 0;
        for (size_t j = 0; j < ns; j++)
            nprof += s[j].run == s[k].run;
        series_label(&s[k], (int)c->nruns, nprof, lbl, sizeof(lbl));
        fprintf(f, "%s", k ? ", " : "");
        gp_str(f, dat);
        fprintf(f, " index %zu using 1:%d with linespoints title ", k, strcmp(metric, "time") ? 2 : 3);
        gp_str(f, lbl);
    }
    fprintf(f, "\nset output\n");
}

/* One run: its description. Several: one line each, led by the legend's
 * name for it (the first four; the rest are counted). */
static void run_titles(const plot_ctx_t *c, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < c->nruns && n < len; k++) {
        char d[512], lbl[160];
        if (k == 4) {
            snprintf(buf + n, len - n, "\n(and %zu more runs)", c->nruns - 4);
            break;
        }
        dl_an_describe(c->runs[k], d, sizeof(d));
        series_t s = {.run = c->runs[k]};
        series_label(&s, (int)c->nruns, 1, lbl, sizeof(lbl));
        if (c->nruns == 1)
            n += (size_t)snprintf(buf + n, len - n, "%s", d);
        else
            n += (size_t)snprintf(buf + n, len - n, "%s%.60s: %s", k ? "\n" : "", lbl, d);
    }
}

static dl_status_t plot_coll(plot_ctx_t *c, const char *coll)
{
    series_t s[64];
    size_t ns = collect(c, coll, s, DL_ARRAY_SIZE(s));
    if (ns == 0)
        return DL_OK;
    int algbw = 1, modelled = 0;
    for (size_t k = 0; k < c->nruns; k++)
        for (size_t i = 0; i < c->runs[k]->nrows; i++) {
            const dl_row_t *r = &c->runs[k]->rows[i];
            if (!strcmp(r->collective, coll) && r->busbw > 0)
                algbw = 0;
            modelled |= r->modelled;
        }
    char dat[1024], title[1200], runs[1024], ylabel[96], fn[32];
    file_name(coll, fn, sizeof(fn));
    snprintf(dat, sizeof(dat), "%s/%s.dat", c->o->outdir, fn);
    uint64_t lo = UINT64_MAX, hi = 0;
    dl_status_t st = write_data(dat, s, ns, coll, algbw, &lo, &hi);
    if (st != DL_OK || hi == 0)
        return st;
    if (lo == hi)
        hi = lo * 2;
    gp_xtics(c->gp, lo, hi);
    run_titles(c, runs, sizeof(runs));
    snprintf(title, sizeof(title), "%s %s %s, %s%s\n%s", coll, s[0].dtype, s[0].op,
             dl_an_place_name(s[0].place), modelled ? " (modelled)" : "", runs);
    snprintf(ylabel, sizeof(ylabel), "%s", algbw ? "algbw (GB/s; busbw is 0 with one rank)"
                                                 : "busbw (GB/s)");
    chart(c, coll, "busbw", dat, s, ns, title, ylabel);
    chart(c, coll, "time", dat, s, ns, title, "time per call (us)");
    return DL_OK;
}

static dl_status_t spawn_gnuplot(const char *exe, const char *script)
{
    char *argv[] = {"gnuplot", (char *)script, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, exe, NULL, NULL, argv, environ), status = 0;
    if (rc != 0) {
        dl_err("cannot run %s: %s", exe, strerror(rc));
        return DL_ERR_UNAVAILABLE;
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        dl_err("gnuplot failed on %s (see its message above)", script);
        return DL_ERR_INTERNAL;
    }
    return DL_OK;
}

/* Collectives in order of first appearance across the runs. */
static size_t collectives(dl_record_t *const *runs, size_t nruns, char (*out)[32], size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < nruns; k++)
        for (size_t i = 0; i < runs[k]->nrows; i++) {
            size_t j = 0;
            while (j < n && strcmp(out[j], runs[k]->rows[i].collective))
                j++;
            if (j == n && n < max)
                snprintf(out[n++], 32, "%s", runs[k]->rows[i].collective);
        }
    return n;
}

/* A collective's name as it appears in file names: [A-Za-z0-9_-] only, so
 * a name read from a file cannot point outside the output folder. */
static void file_name(const char *coll, char *out, size_t len)
{
    size_t i = 0;
    for (; coll[i] && i < len - 1; i++) {
        char ch = coll[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '-';
        out[i] = ok ? ch : '_';
    }
    out[i] = '\0';
    if (i == 0)
        snprintf(out, len, "_");
}

static dl_status_t plot_all(plot_ctx_t *c, const char *exe, char (*colls)[32], size_t ncoll,
                            const char *script)
{
    char *text = NULL;
    size_t len = 0;
    c->gp = open_memstream(&text, &len);
    if (!c->gp)
        return DL_ERR_NOMEM;
    fprintf(c->gp, "# dlcomm plot: data in <collective>.dat (bytes bw time_us), one block per line\n"
                   "set logscale x 2\nset xlabel \"size\"\nset grid\nset key left top\n");
    dl_status_t st = DL_OK;
    for (size_t i = 0; i < ncoll && st == DL_OK; i++)
        st = plot_coll(c, colls[i]);
    fclose(c->gp);
    if (st == DL_OK)
        st = dl_write_atomic(script, text, len);
    free(text);
    if (st == DL_OK)
        st = spawn_gnuplot(exe, script);
    for (size_t i = 0; i < c->ncharts; i++) {
        struct stat sb;
        if (st == DL_OK && (stat(c->tmp[i], &sb) != 0 || sb.st_size == 0)) {
            dl_err("gnuplot wrote no %s", c->fin[i]);
            st = DL_ERR_INTERNAL;
        }
    }
    for (size_t i = 0; i < c->ncharts; i++) {
        if (st == DL_OK && rename(c->tmp[i], c->fin[i]) != 0) {
            dl_err("cannot write %s: %s", c->fin[i], strerror(errno));
            st = DL_ERR_IO;
        }
        if (st != DL_OK)
            unlink(c->tmp[i]);
    }
    return st;
}

dl_status_t dl_an_plot(dl_record_t *const *runs, size_t nruns, const dl_plot_opts_t *o)
{
    char exe[4096];
    if (dl_an_find_gnuplot(exe, sizeof(exe)) != DL_OK) {
        dl_err("gnuplot is not on PATH: install it (apt-get install gnuplot-nox); nothing written");
        return DL_ERR_UNAVAILABLE;
    }
    if (strpbrk(o->outdir, "`\n\r")) {
        dl_err("--out %s: a folder name with a backquote or newline cannot be passed to gnuplot",
               o->outdir);
        return DL_ERR_USAGE;
    }
    if (dl_mkdir_p(o->outdir) != DL_OK || dl_dir_writable(o->outdir) != DL_OK) {
        dl_err("--out %s: cannot create or write that folder", o->outdir);
        return DL_ERR_IO;
    }
    char colls[32][32], script[1100];
    size_t ncoll = collectives(runs, nruns, colls, 32);
    char (*tmp)[1024] = calloc(2 * ncoll + 1, 1024), (*fin)[1024] = calloc(2 * ncoll + 1, 1024);
    plot_ctx_t c = {.runs = runs, .nruns = nruns, .o = o, .tmp = tmp, .fin = fin};
    dl_status_t st = tmp && fin ? DL_OK : DL_ERR_NOMEM;
    snprintf(script, sizeof(script), "%s/plot.gp", o->outdir);
    if (st == DL_OK)
        st = plot_all(&c, exe, colls, ncoll, script);
    if (st == DL_OK && c.ncharts == 0) { /* never a claim of charts not drawn */
        dl_err("no drawable figures in the run%s given (every time unknown, 0 or beyond %g); "
               "nothing written", nruns == 1 ? "" : "s", DL_PLOT_MAX);
        st = DL_ERR_INPUT;
    }
    if (st != DL_OK) { /* no partial outputs: the data and script go too */
        unlink(script);
        for (size_t i = 0; i < ncoll; i++) {
            char dat[1100], fn[32];
            file_name(colls[i], fn, sizeof(fn));
            snprintf(dat, sizeof(dat), "%s/%s.dat", o->outdir, fn);
            unlink(dat);
        }
    }
    free(tmp);
    free(fin);
    return st;
}

/* ---- a tune record: exposed time per candidate, one line per profile ---- */

/* tune.dat: one block per profile (candidate number, exposed ms, comm ms). */
static dl_status_t tune_script(const cJSON *tune, const dl_plot_opts_t *o, const char *dat,
                               const char *tmp_chart, char **gp, size_t *gplen)
{
    dl_tune_rep_t t;
    if (dl_an_tune_make(tune, NULL, &t) != DL_OK)
        return DL_ERR_NOMEM;
    char *dtext = NULL;
    size_t dlen = 0;
    FILE *d = open_memstream(&dtext, &dlen), *f = open_memstream(gp, gplen);
    if (!d || !f) {
        dl_an_tune_free(&t);
        return DL_ERR_NOMEM;
    }
    fprintf(d, "# dlcomm plot of a tune record: candidate exposed_ms comm_ms label\n");
    /* A block per profile with a measured candidate: one that ended first
     * has none, and gnuplot refuses an empty block. */
    int lines[DL_ARRAY_SIZE(t.profs)] = {0};
    for (size_t k = 0; k < t.nprofs; k++) {
        for (size_t i = 0; i < t.ncand; i++) {
            const dl_tune_cand_t *c = &t.cand[i];
            if (c->prof == k && isfinite(c->exposed_us) && isfinite(c->comm_us))
                lines[k] = 1, fprintf(d, "%zu %.6f %.6f \"%s\"\n", c->x, c->exposed_us / 1e3,
                                      c->comm_us / 1e3, c->label);
        }
        if (lines[k])
            fprintf(d, "\n\n");
    }
    int xmax = (int)t.nx;
    fclose(d);
    dl_status_t st = dl_write_atomic(dat, dtext, dlen);
    free(dtext);
    char title[256];
    snprintf(title, sizeof(title), "dlcomm tune: %s, %s: exposed communication per step",
             t.model[0] ? t.model : "model", t.framework);
    fprintf(f, strcmp(o->format, "svg") == 0 ? "set terminal svg size 1000,600 dynamic noenhanced\n"
                                             : "set terminal pngcairo size 1000,600 noenhanced\n");
    fprintf(f, "set output ");
    gp_str(f, tmp_chart);
    fprintf(f, "\nset title ");
    gp_str(f, title);
    fprintf(f, "\nset ylabel \"exposed time per step (ms)\"\nset xlabel \"candidate\"\n"
               "set grid\nset key left top\nset xrange [-0.5:%d.5]\nset xtics rotate by -30\nplot ",
            xmax > 0 ? xmax - 1 : 0);
    size_t nl = 0;
    for (size_t k = 0; k < t.nprofs; k++) {
        if (!lines[k])
            continue;
        fprintf(f, "%s", nl ? ", " : "");
        gp_str(f, dat);
        fprintf(f, " index %zu using 1:2:xticlabels(4) with linespoints title ", nl++);
        gp_str(f, t.profs[k]);
    }
    fprintf(f, "%s\nset output\n", nl ? "" : "0 notitle");
    fclose(f);
    dl_an_tune_free(&t);
    return st;
}

dl_status_t dl_an_plot_tune(const cJSON *tune, const dl_plot_opts_t *o)
{
    char exe[4096], dat[1100], gpf[1100], tmp[1100], fin[1100];
    if (dl_an_find_gnuplot(exe, sizeof(exe)) != DL_OK) {
        dl_err("gnuplot is not on PATH: install it (apt-get install gnuplot-nox); nothing written");
        return DL_ERR_UNAVAILABLE;
    }
    if (strpbrk(o->outdir, "`\n\r\"")) {
        dl_err("--out %s: a folder name with a quote, backquote or newline cannot be passed to "
               "gnuplot", o->outdir);
        return DL_ERR_USAGE;
    }
    if (dl_mkdir_p(o->outdir) != DL_OK || dl_dir_writable(o->outdir) != DL_OK) {
        dl_err("--out %s: cannot create or write that folder", o->outdir);
        return DL_ERR_IO;
    }
    snprintf(dat, sizeof(dat), "%s/tune.dat", o->outdir);
    snprintf(gpf, sizeof(gpf), "%s/tune.gp", o->outdir);
    char stem[64];
    snprintf(stem, sizeof(stem), "tune-exposed.%s", o->format);
    gnuplot_output(tmp, sizeof(tmp), o->outdir, stem);
    snprintf(fin, sizeof(fin), "%s/tune-exposed.%s", o->outdir, o->format);
    char *gp = NULL;
    size_t gplen = 0;
    dl_status_t st = tune_script(tune, o, dat, tmp, &gp, &gplen);
    if (st == DL_OK)
        st = dl_write_atomic(gpf, gp, gplen);
    free(gp);
    if (st == DL_OK)
        st = spawn_gnuplot(exe, gpf);
    struct stat sb;
    if (st == DL_OK && (stat(tmp, &sb) != 0 || sb.st_size == 0)) {
        dl_err("gnuplot wrote no %s", fin);
        st = DL_ERR_INTERNAL;
    }
    if (st == DL_OK && rename(tmp, fin) != 0) {
        dl_err("cannot write %s: %s", fin, strerror(errno));
        st = DL_ERR_IO;
    }
    if (st != DL_OK) { /* no partial outputs */
        unlink(tmp);
        unlink(dat);
        unlink(gpf);
    }
    return st;
}
