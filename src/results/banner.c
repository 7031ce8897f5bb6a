/* The sweep's header and footer on stdout, read from the run document
 * itself, so what a person reads is what run.json says: before the tables,
 * what runs where (the backend and why, the hosts, each rank's host and GPU,
 * the versions); after them, what was found (wrong elements, busbw, rows
 * that did not converge, stragglers) and where the files went. -q drops the
 * tables, never these. */
#include "results.h"

#include <math.h>
#include <string.h>

static const char *str(const cJSON *o, const char *key, const char *def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring && v->valuestring[0] ? v->valuestring : def;
}

/* "0-3,6" from a list of rank numbers. */
static void ranges(const cJSON *a, char *buf, size_t len)
{
    size_t n = 0;
    const cJSON *v = a ? a->child : NULL;
    buf[0] = '\0';
    while (v && n < len) {
        int lo = v->valueint, hi = lo;
        while (v->next && v->next->valueint == hi + 1)
            v = v->next, hi++;
        n += (size_t)(lo == hi ? snprintf(buf + n, len - n, "%s%d", n ? "," : "", lo)
                               : snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "", lo, hi));
        v = v->next;
    }
}

/* A rank's GPU as the fingerprint maps it ("" when none was used). */
static const char *rank_gpu(const cJSON *fp, int rank)
{
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(fp, "rank_gpus"), rank);
    return cJSON_IsString(g) ? g->valuestring : "";
}

static void host_lines(FILE *f, const cJSON *fp)
{
    const cJSON *h;
    cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(fp, "hosts"))
    {
        const cJSON *rs = cJSON_GetObjectItemCaseSensitive(h, "ranks"), *r;
        char list[512];
        ranges(rs, list, sizeof(list));
        fprintf(f, "# host %s: rank%s %s ->", str(h, "name", "?"),
                cJSON_GetArraySize(rs) == 1 ? "" : "s", list);
        int any = 0;
        cJSON_ArrayForEach(r, rs)
        {
            const char *g = rank_gpu(fp, r->valueint);
            if (g[0])
                fprintf(f, " %d:%s", r->valueint, g), any = 1;
        }
        fprintf(f, "%s\n", any ? "" : " no GPU (host buffers)");
    }
}

static void versions_line(FILE *f, const cJSON *run)
{
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(run, "versions"), "runtime");
    fprintf(f, "# versions: dlcomm %s; MPI %s; NCCL %s; CUDA runtime %s; driver %s\n",
            str(run, "tool_version", "?"), str(rt, "mpi", "?"), str(rt, "nccl", "none"),
            str(rt, "cuda_runtime", "none"), str(rt, "cuda_driver", "none"));
}

void dl_banner_header(FILE *f, const cJSON *run, int legend)
{
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(run, "fingerprint");
    const cJSON *be = cJSON_GetObjectItemCaseSensitive(run, "backend");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(be, "modelled");
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(fp, "ranks");
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(fp, "nodes");
    fprintf(f, "# %s\n", str(run, "command", "dlcomm sweep"));
    fprintf(f, "# backend %s (%s)\n", str(be, "name", "?"), str(be, "why", "asked for"));
    if (m) /* one rank count: the model's, the processes said apart */
        fprintf(f, "# modelled: %d ranks (%d nodes x %d GPUs, %s), carried by %d processes\n",
                cJSON_GetObjectItem(m, "ranks")->valueint, cJSON_GetObjectItem(m, "nodes")->valueint,
                cJSON_GetObjectItem(m, "gpus_per_node")->valueint, str(m, "system", "?"),
                cJSON_IsNumber(ranks) ? ranks->valueint : 0);
    else
        fprintf(f, "# %d ranks on %d host%s\n", cJSON_IsNumber(ranks) ? ranks->valueint : 0,
                cJSON_IsNumber(nodes) ? nodes->valueint : 0,
                cJSON_IsNumber(nodes) && nodes->valueint == 1 ? "" : "s");
    host_lines(f, fp);
    versions_line(f, run);
    if (legend)
        fprintf(f, "# columns: time = the mean per call over back-to-back batches (busbw's "
                   "time, as nccl-tests' time); p50, p99 = a separate pass, each call timed "
                   "alone, the slowest rank's: they can exceed time; #wrong = wrong elements "
                   "(- = not checked); chose = what the library chose at the row's checked "
                   "call, algorithm/protocol/channels (NCCL: its profiler; sim: the model), "
                   "- = not known, * = the ranks differed; stop = why timing ended: ci (the CI "
                   "target met), budget (--budget spent first), noisy (the spread on a quarter of "
                   "--budget predicted no convergence within it), max-iters, fixed (-n), no-op "
                   "(one rank in place moves nothing: timed over the first batches only)\n");
    fflush(f);
}

/* ---- the footer ---- */

typedef struct {
    int rows, unchecked, not_conv, budget, noisy, maxit;
    double wrong, bw_sum, peak;
    int bw_rows;
    const cJSON *peak_row;
} tally_t;

static void tally_row(tally_t *t, const cJSON *row)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(row, "wrong");
    const cJSON *bw = cJSON_GetObjectItemCaseSensitive(row, "busbw_gbps");
    t->rows++;
    if (cJSON_IsNumber(w))
        t->wrong += w->valuedouble;
    else
        t->unchecked++;
    if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(row, "converged"))) {
        const char *why = str(row, "stop", "");
        t->not_conv++;
        t->budget += strcmp(why, "budget") == 0;
        t->noisy += strcmp(why, "noisy") == 0;
        t->maxit += strcmp(why, "max-iters") == 0;
    }
    if (cJSON_IsNumber(bw) && isfinite(bw->valuedouble)) {
        t->bw_sum += bw->valuedouble;
        t->bw_rows++;
        if (!t->peak_row || bw->valuedouble > t->peak)
            t->peak = bw->valuedouble, t->peak_row = row;
    }
}

static void profile_line(FILE *f, const cJSON *p)
{
    tally_t t = {0};
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(p, "results"))
        tally_row(&t, row);
    fprintf(f, "# profile %s: %s, %d rows", str(p, "name", "?"), str(p, "status", "?"), t.rows);
    if (!t.rows) {
        const char *why = str(p, "reason", "");
        fprintf(f, "%s%s\n", why[0] ? ": " : "", why);
        return;
    }
    if (t.unchecked == t.rows)
        fprintf(f, "; wrong elements - (not checked%s)",
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "modelled")) ? ": a model moves no data" : "");
    else
        fprintf(f, "; %.0f wrong elements%s", t.wrong, t.wrong > 0 ? " (WRONG)" : "");
    if (t.bw_rows) {
        char sz[32];
        dl_size_format((uint64_t)cJSON_GetObjectItemCaseSensitive(t.peak_row, "bytes")->valuedouble,
                       sz, sizeof(sz));
        fprintf(f, "; busbw avg %.2f, peak %.2f GB/s (%s %s %s)", t.bw_sum / t.bw_rows, t.peak,
                str(t.peak_row, "collective", "?"), sz, str(t.peak_row, "placement", "?"));
    }
    if (t.not_conv)
        fprintf(f, "; %d rows not converged (budget %d, noisy %d, max-iters %d)", t.not_conv,
                t.budget, t.noisy, t.maxit);
    else
        fprintf(f, "; every row converged");
    fprintf(f, "\n");
}

static void stragglers_line(FILE *f, const cJSON *run)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(run, "stragglers"), *e;
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(run, "fingerprint");
    if (!a)
        return;
    fprintf(f, "# stragglers:");
    if (!cJSON_GetArraySize(a))
        fprintf(f, " none");
    cJSON_ArrayForEach(e, a)
    {
        int rank = cJSON_GetObjectItem(e, "rank")->valueint;
        const char *g = rank_gpu(fp, rank);
        const cJSON *sr = cJSON_GetObjectItem(e, "slow_rows");
        fprintf(f, "%s rank %d (%s, %s) late in %d/%d rows by %.1f us", e == a->child ? "" : ";",
                rank, str(e, "host", "?"), g[0] ? g : "no GPU",
                cJSON_GetObjectItem(e, "rows")->valueint, cJSON_GetObjectItem(e, "of_rows")->valueint,
                cJSON_GetObjectItem(e, "late_us")->valuedouble);
        if (cJSON_IsNumber(sr))
            fprintf(f, ", slow in %d (%.2fx its host's median time)", sr->valueint,
                    cJSON_GetObjectItem(e, "slow_ratio")->valuedouble);
    }
    fprintf(f, "\n");
}

static void files_line(FILE *f, const cJSON *run, const char *dir)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(run, "options");
    fprintf(f, "# wrote %s/run.json and %s/run.csv", dir, dir);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "plot")))
        fprintf(f, ", charts in %s", dir);
    if (str(o, "html", NULL))
        fprintf(f, ", %s", str(o, "html", ""));
    if (str(o, "prometheus", NULL))
        fprintf(f, ", %s", str(o, "prometheus", ""));
    fprintf(f, "\n");
}

void dl_banner_footer(FILE *f, const cJSON *run, const char *dir, int written)
{
    const cJSON *p;
    fprintf(f, "#\n");
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(run, "profiles"))
        profile_line(f, p);
    stragglers_line(f, run);
    if (written)
        files_line(f, run, dir);
    fflush(f);
}
