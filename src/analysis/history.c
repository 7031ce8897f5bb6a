/* history: every run under some folders (dlcomm run.json and nccl-tests
 * files, read by dl_an_load), grouped by hosts and profile, ordered by when
 * they started; busbw at a few sizes over time, the version changes between
 * consecutive runs, and the last run judged against the one before by
 * compare's rule. */
#include "analysis.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* nccl-tests output is told by its content; only its head is read here. */
static int looks_ncclt(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char buf[4097];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return (buf[0] == '{' && strstr(buf, "\"out_of_place\"")) || strstr(buf, "# nccl-tests version") ||
           strstr(buf, "# Collective test starting") || strstr(buf, "# nThread "); /* every release */
}

static dl_status_t add_run(dl_hist_t *h, const char *path)
{
    if (DL_GROW(h->runs, h->nruns, h->cap, 64) != DL_OK)
        return DL_ERR_NOMEM;
    dl_status_t st = dl_an_load(path, &h->runs[h->nruns]);
    if (st == DL_ERR_NOMEM) /* no memory is no verdict on the file: the command ends 3 */
        return st;
    if (st != DL_OK) {
        h->skipped++;
        return DL_OK;
    }
    h->nruns++;
    return DL_OK;
}

/* A log holding several nccl-tests runs (a CI or Slurm log) is several
 * runs, LOG@1 .. LOG@N, in their order in it. */
static dl_status_t add_log(dl_hist_t *h, const char *path)
{
    char *data = NULL, part[1100];
    size_t len = 0;
    int runs = 1;
    if (dl_read_file(path, &data, &len) == DL_OK && data && data[strspn(data, " \t\r\n")] != '{')
        runs = dl_an_ncclt_runs(data);
    free(data);
    dl_status_t st = DL_OK;
    for (int k = 1; runs > 1 && k <= runs && st == DL_OK; k++) {
        snprintf(part, sizeof(part), "%s@%d", path, k);
        st = add_run(h, part);
    }
    return runs > 1 ? st : add_run(h, path);
}

static dl_status_t walk(dl_hist_t *h, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) { /* its runs are missing from the story: said, as an unreadable run.json is */
        dl_warn("%s: cannot read this folder (%s); its runs are left out", dir, strerror(errno));
        h->skipped++;
        return DL_OK;
    }
    dl_status_t st = DL_OK;
    struct dirent *e;
    while (st == DL_OK && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "workers"))
            continue;
        char p[1024];
        struct stat sb;
        if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p) || stat(p, &sb))
            continue;
        if (S_ISDIR(sb.st_mode)) {
            if (depth < 16)
                st = walk(h, p, depth + 1);
        } else if (!strcmp(e->d_name, "run.json"))
            st = add_run(h, p);
        else if ((has_suffix(e->d_name, ".json") || has_suffix(e->d_name, ".txt") ||
                  has_suffix(e->d_name, ".log") || has_suffix(e->d_name, ".out")) &&
                 looks_ncclt(p))
            st = add_log(h, p);
    }
    closedir(d);
    return st;
}

/* "2026-12-02T17:07:24Z" (dlcomm: UTC) or "2026-12-02 12:54:19" (nccl-tests
 * JSON: the local time of the host that ran it, with no zone; taken as this
 * host's, the zone its runs are read in). */
static double started_s(const dl_record_t *r)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    size_t len = strlen(r->started);
    if (sscanf(r->started, "%d-%d-%d%*c%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec) == 6) {
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        tm.tm_isdst = -1;
        return (double)(len && r->started[len - 1] == 'Z' ? timegm(&tm) : mktime(&tm));
    }
    struct stat sb; /* no date inside (nccl-tests text): the file's own, and a log's runs
                     * in their order in it (LOG@K) */
    char file[512];
    snprintf(file, sizeof(file), "%s", r->path);
    if (r->part > 0 && strrchr(file, '@'))
        *strrchr(file, '@') = '\0';
    return stat(file, &sb) == 0 ? (double)sb.st_mtime + r->part * 1e-3 : 0;
}

static int by_time(const void *a, const void *b)
{
    const dl_hist_run_t *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->t < y->t ? -1 : x->t > y->t;
}

dl_status_t dl_an_history_load(char *const *dirs, size_t ndirs, dl_hist_t *h)
{
    memset(h, 0, sizeof(*h));
    dl_status_t st = DL_OK;
    for (size_t i = 0; i < ndirs && st == DL_OK; i++) {
        struct stat sb;
        if (stat(dirs[i], &sb)) {
            dl_err("%s: no such file or folder", dirs[i]);
            st = DL_ERR_INPUT;
        } else if (S_ISDIR(sb.st_mode))
            st = walk(h, dirs[i], 0);
        else
            st = add_log(h, dirs[i]);
    }
    /* One entry per (run, profile): a run of four profiles is in four groups. */
    size_t n = 0;
    for (size_t i = 0; i < h->nruns; i++)
        n += h->runs[i].nprofs ? h->runs[i].nprofs : 1;
    h->ent = calloc(n + 1, sizeof(*h->ent));
    if (st == DL_OK && !h->ent)
        st = DL_ERR_NOMEM;
    for (size_t i = 0; st == DL_OK && i < h->nruns; i++) {
        const dl_record_t *r = &h->runs[i];
        size_t np;
        dl_name_t *profs = dl_an_profile_names(r, &np);
        if (!profs)
            st = DL_ERR_NOMEM;
        for (size_t k = 0; k < np; k++) {
            dl_hist_run_t *e = &h->ent[h->nent++];
            e->run = r;
            e->t = started_s(r);
            snprintf(e->profile, sizeof(e->profile), "%s", profs[k]);
            /* measured and modelled runs, or other rank counts, are not one trend */
            snprintf(e->key, sizeof(e->key), "%s|%s|%d|%d", r->hosts[0] ? r->hosts : "?", profs[k],
                     dl_an_run_ranks(r), r->nrows && r->rows[0].modelled);
        }
        free(profs);
    }
    if (st == DL_OK && h->nruns == 0) {
        dl_err("no runs found under the folders given (run.json or nccl-tests output)");
        st = DL_ERR_INPUT;
    }
    if (st != DL_OK)
        return st;
    qsort(h->ent, h->nent, sizeof(*h->ent), by_time);
    for (size_t i = 0; i < h->nent; i++)
        if (i == 0 || strcmp(h->ent[i].key, h->ent[i - 1].key))
            h->ngroups++;
    return DL_OK;
}

void dl_an_history_free(dl_hist_t *h)
{
    for (size_t i = 0; i < h->nruns; i++)
        dl_record_free(&h->runs[i]);
    free(h->runs);
    free(h->ent);
    memset(h, 0, sizeof(*h));
}

/* The versions of a run that, when they change, are worth a mark. */
void dl_an_history_changes(const dl_record_t *a, const dl_record_t *b, char *buf, size_t len)
{
    const struct {
        const char *name, *x, *y;
    } v[] = {{"NCCL", a->nccl, b->nccl}, {"CUDA", a->cuda, b->cuda}, {"driver", a->driver, b->driver},
             {"MPI", a->mpi, b->mpi}, {"kernel", a->kernel, b->kernel}, {"tool", a->tool, b->tool}};
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < DL_ARRAY_SIZE(v) && n < len; i++)
        if (v[i].x[0] && v[i].y[0] && strcmp(v[i].x, v[i].y) && /* unknown or less known: no change */
            strncmp(v[i].x, v[i].y, strlen(v[i].x) < strlen(v[i].y) ? strlen(v[i].x) : strlen(v[i].y)))
            n += (size_t)snprintf(buf + n, len - n, "%s%s %s -> %s", n ? "; " : "", v[i].name,
                                  v[i].x[0] ? v[i].x : "?", v[i].y[0] ? v[i].y : "?");
}

/* The group's trend sizes, from its last run's curve of coll: the smallest,
 * the one nearest the middle (log scale) and the largest. */
size_t dl_an_history_sizes(const dl_hist_run_t *last, const char *coll, uint64_t *out)
{
    dl_curve_t c;
    if (dl_curve_get(last->run, last->profile, coll, &c) != DL_OK)
        return 0;
    size_t n = 0;
    if (c.n) {
        out[n++] = c.v[0]->bytes;
        if (c.n > 2)
            out[n++] = c.v[c.n / 2]->bytes;
        if (c.n > 1)
            out[n++] = c.v[c.n - 1]->bytes;
    }
    dl_curve_free(&c);
    return n;
}

/* The bandwidth (busbw, algbw on one rank) at a size; NAN when not measured. */
double dl_an_history_bw(const dl_hist_run_t *e, const char *coll, uint64_t bytes, double *time_us)
{
    dl_curve_t c;
    double bw = NAN;
    *time_us = NAN;
    if (dl_curve_get(e->run, e->profile, coll, &c) != DL_OK)
        return NAN;
    for (size_t i = 0; i < c.n; i++)
        if (c.v[i]->bytes == bytes) {
            bw = dl_curve_bw(&c, i);
            *time_us = c.v[i]->time_us;
        }
    dl_curve_free(&c);
    return bw;
}

/* compare's verdict of the group's last run against the one before, this
 * profile's pairs only. */
dl_status_t dl_an_history_verdict(const dl_hist_run_t *prev, const dl_hist_run_t *last,
                                  dl_hist_verdict_t *v)
{
    memset(v, 0, sizeof(*v));
    if ((v->running = dl_an_still_running(last->run)))
        return DL_OK; /* what it has so far is no verdict */
    dl_cmp_opts_t o = {.threshold = 0.05, .metric = DL_M_BUSBW, .min_size = 1};
    dl_cmp_t c;
    if (dl_an_compare(prev->run, last->run, &o, &c) != DL_OK)
        return DL_ERR_NOMEM;
    for (size_t i = 0; i < c.npairs; i++)
        if (!strcmp(c.pairs[i].cur->profile, last->profile) || c.profiles_merged) {
            v->count[c.pairs[i].verdict]++;
            v->npairs++;
            v->wrong += c.pairs[i].cur->wrong > 0;
        }
    for (size_t i = 0; i < last->run->nprofs; i++)
        if (!strcmp(last->run->profs[i].name, last->profile) &&
            strstr(c.failures, last->profile))
            v->failed = 1;
    if (strstr(c.wrong_profiles, last->profile)) /* it finished; its data were wrong */
        v->wrong++;
    v->regressed = v->count[DL_V_REGRESSION] || v->failed || v->wrong;
    dl_an_cmp_free(&c);
    return DL_OK;
}

const char *dl_an_history_coll(const dl_hist_run_t *last, char *buf, size_t len)
{
    const dl_record_t *r = last->run;
    buf[0] = '\0';
    for (size_t i = 0; i < r->nrows; i++)
        if (!strcmp(r->rows[i].profile, last->profile)) {
            if (!buf[0] || !strcmp(r->rows[i].collective, "allreduce"))
                snprintf(buf, len, "%s", r->rows[i].collective);
        }
    return buf;
}

static void group_text(FILE *f, const dl_hist_run_t *g, size_t n)
{
    const dl_hist_run_t *last = &g[n - 1];
    char coll[64], a[32], b[32], ch[512];
    uint64_t sz[3];
    dl_an_history_coll(last, coll, sizeof(coll));
    size_t ns = dl_an_history_sizes(last, coll, sz);
    snprintf(a, sizeof(a), "%s", g[0].run->started[0] ? g[0].run->started : "?");
    snprintf(b, sizeof(b), "%s", last->run->started[0] ? last->run->started : "?");
    char ranks[192];
    dl_an_ranks_text(last->run, ranks, sizeof(ranks));
    fprintf(f, "\nhosts %s, profile %s, %s: %zu run%s, %s .. %s\n", last->run->hosts,
            last->profile, ranks, n, n == 1 ? "" : "s", a, b);
    for (size_t k = 0; k < ns; k++) {
        char s[32];
        double t0, t1, lo = INFINITY, hi = -INFINITY;
        dl_size_format(sz[k], s, sizeof(s));
        for (size_t i = 0; i < n; i++) {
            double t, v = dl_an_history_bw(&g[i], coll, sz[k], &t);
            if (isfinite(v))
                lo = fmin(lo, v), hi = fmax(hi, v);
        }
        double first = dl_an_history_bw(&g[0], coll, sz[k], &t0);
        double lastv = dl_an_history_bw(last, coll, sz[k], &t1);
        fprintf(f, "  %s %s: first %.4g GB/s (%.4g us), last %.4g GB/s (%.4g us), range %.4g .. %.4g\n",
                coll, s, first, t0, lastv, t1, lo, hi);
    }
    for (size_t i = 1; i < n; i++) {
        dl_an_history_changes(g[i - 1].run, g[i].run, ch, sizeof(ch));
        if (ch[0])
            fprintf(f, "  change at %s: %s\n", g[i].run->started[0] ? g[i].run->started : g[i].run->path, ch);
    }
    if (n < 2) {
        fprintf(f, "  verdict: one run, nothing to compare with\n");
        return;
    }
    dl_hist_verdict_t v;
    if (dl_an_history_verdict(&g[n - 2], last, &v) != DL_OK)
        return;
    if (v.running) {
        fprintf(f, "  verdict: the last run (%s) is still running: not judged until it ends\n",
                last->run->path);
        return;
    }
    fprintf(f, "  verdict of the last run against the one before: %s (%zu regression, %zu improvement, "
               "%zu unchanged, %zu noise of %zu pairs%s%s)\n", v.regressed ? "regression" : "no regression",
            v.count[DL_V_REGRESSION], v.count[DL_V_IMPROVEMENT], v.count[DL_V_UNCHANGED],
            v.count[DL_V_NOISE], v.npairs, v.failed ? "; the profile no longer finishes" : "",
            v.wrong ? "; it finished with wrong data" : "");
}

dl_status_t dl_an_history_print(FILE *f, const dl_hist_t *h)
{
    fprintf(f, "history: %zu runs, %zu groups (hosts, profile)%s\n", h->nruns, h->ngroups,
            h->skipped ? "; some files or folders could not be read as runs and were left out "
                         "(said above)" : "");
    for (size_t i = 0, j; i < h->nent; i = j) {
        for (j = i + 1; j < h->nent && !strcmp(h->ent[j].key, h->ent[i].key); j++)
            ;
        group_text(f, &h->ent[i], j - i);
    }
    return DL_OK;
}
