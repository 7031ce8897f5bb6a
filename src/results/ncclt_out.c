/* sweep --format nccl-tests: the table in nccl-tests' own layout, so the
 * log parsers written for it read a dlcomm run. Per profile and collective
 * one block as an nccl-tests binary prints one run: its preamble, the
 * "Using devices" lines (rank, pid, host, GPU), a row per size with
 * out-of-place and in-place side by side under its headers, then its
 * closing lines (out of bounds values, average busbw). Widths follow the
 * output of nccl-tests 2.19 (results/reference/); what dlcomm has beyond
 * nccl-tests (p50, p99, stop) stays in run.json. */
#include "results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dl_ncclt {
    FILE *f;
    const cJSON *run;
    const dl_coll_t *coll;  /* the open block's, NULL: none */
    char profile[128];
    int have_out;           /* an out-of-place row waits for its in-place twin */
    dl_result_t out;        /* its figures (per-rank arrays not kept) */
    double bw_sum;
    int bw_rows;
    uint64_t wrong;
    int unchecked;
};

dl_ncclt_t *dl_ncclt_new(FILE *f, const cJSON *run)
{
    dl_ncclt_t *t = calloc(1, sizeof(*t));
    if (t) {
        t->f = f;
        t->run = run;
    }
    return t;
}

/* nccl-tests' names of the binary and of the dtypes. */
static void binary_name(const dl_coll_t *c, char *buf, size_t len)
{
    static const char *const names[][2] = {
        {"allreduce", "all_reduce"},         {"allgather", "all_gather"},
        {"reducescatter", "reduce_scatter"}, {"alltoallv", "alltoall"},
    };
    const char *n = c->name;
    for (size_t i = 0; i < DL_ARRAY_SIZE(names); i++)
        if (strcmp(n, names[i][0]) == 0)
            n = names[i][1];
    snprintf(buf, len, "%s_perf", n);
}

static const char *dtype_name(dl_dtype_t dt)
{
    static const char *const names[][2] = {
        {"float32", "float"}, {"float16", "half"}, {"float64", "double"},
        {"fp8e4m3", "f8e4m3"}, {"fp8e5m2", "f8e5m2"},
    };
    for (size_t i = 0; i < DL_ARRAY_SIZE(names); i++)
        if (strcmp(dl_dtype_names[dt], names[i][0]) == 0)
            return names[i][1];
    return dl_dtype_names[dt];
}

/* A figure in a column of `width`, with as many decimals as fit (two at
 * most), then in e-notation: nccl-tests' columns never widen. */
static void fit(double v, int width, char *buf, size_t len)
{
    for (int d = 2; d >= 0; d--)
        if (snprintf(buf, len, "%.*f", d, v) <= width)
            return;
    snprintf(buf, len, "%.0e", v);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void devices(dl_ncclt_t *t)
{
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(t->run, "fingerprint"), *h;
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(fp, "rank_gpus");
    fprintf(t->f, "#\n# Using devices\n");
    cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(fp, "hosts"))
    {
        const cJSON *rs = cJSON_GetObjectItemCaseSensitive(h, "ranks");
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(h, "pids");
        const char *host = cJSON_GetObjectItemCaseSensitive(h, "name")->valuestring;
        for (int i = 0; i < cJSON_GetArraySize(rs); i++) {
            int r = cJSON_GetArrayItem(rs, i)->valueint;
            const cJSON *pid = cJSON_GetArrayItem(ps, i), *g = cJSON_GetArrayItem(gpus, r);
            const char *bus = cJSON_IsString(g) && g->valuestring[0] ? g->valuestring : NULL;
            fprintf(t->f, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s\n", r,
                    cJSON_IsNumber(pid) ? pid->valueint : 0, host, bus ? i : -1,
                    bus ? bus : "none", bus ? "GPU" : "host buffers (dlcomm mpi or sim)");
        }
    }
}

static void block_start(dl_ncclt_t *t, const dl_result_t *r, const char *profile)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(t->run, "options");
    char bin[64];
    binary_name(r->c.coll, bin, sizeof(bin));
    t->coll = r->c.coll;
    snprintf(t->profile, sizeof(t->profile), "%s", profile);
    t->bw_sum = 0;
    t->bw_rows = 0;
    t->wrong = 0;
    t->unchecked = 0;
    fprintf(t->f, "# dlcomm %s, profile %s, in nccl-tests' layout (run.json has the rest)\n",
            cJSON_GetObjectItemCaseSensitive(t->run, "tool_version")->valuestring, profile);
    fprintf(t->f, "# Collective test starting: %s\n", bin);
    fprintf(t->f, "# nThread 1 nGpus 1 minBytes %.0f maxBytes %.0f step: %g(factor) warmup iters: "
                  "%.0f iters: %.0f agg iters: 1 validation: %d graph: 0\n",
            num(o, "minbytes"), num(o, "maxbytes"), num(o, "stepfactor"), num(o, "warmup_iters"),
            num(o, "iters"), cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "check")));
    devices(t);
    fprintf(t->f, "#\n#%62s%s%23s%s%10s\n", "", "out-of-place", "", "in-place", "");
    fprintf(t->f, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "size",
            "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
            "busbw", "#wrong");
    fprintf(t->f, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "(B)",
            "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

/* One placement's four columns; NULL: not measured (nccl-tests' N/A). */
static void side(dl_ncclt_t *t, const dl_result_t *r)
{
    char tm[32], alg[32], bus[32], wrong[32];
    if (!r) {
        fprintf(t->f, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
        return;
    }
    fit(r->t.mean * 1e6, 7, tm, sizeof(tm));
    fit(r->algbw_gbps, 6, alg, sizeof(alg));
    fit(r->busbw_gbps, 6, bus, sizeof(bus));
    snprintf(wrong, sizeof(wrong), "%llu", (unsigned long long)r->wrong);
    fprintf(t->f, "  %7s  %6s  %6s  %6s", tm, alg, bus, r->checked ? wrong : "N/A");
    t->bw_sum += r->busbw_gbps;
    t->bw_rows++;
    t->wrong += r->checked ? r->wrong : 0;
    t->unchecked += !r->checked;
}

static void row(dl_ncclt_t *t, const dl_result_t *out, const dl_result_t *in)
{
    const dl_result_t *r = out ? out : in;
    const dl_case_t *c = &r->c;
    fprintf(t->f, "%12llu  %12zu  %8s  %6s  %6d", (unsigned long long)c->counts.bytes,
            c->counts.param_count, dtype_name(c->dtype), c->coll->has_op ? dl_op_names[c->op] : "none",
            c->root);
    side(t, out);
    side(t, in);
    fprintf(t->f, "\n");
}

/* The waiting out-of-place row, alone (its in-place twin not asked for). */
static void flush(dl_ncclt_t *t)
{
    if (t->have_out)
        row(t, &t->out, NULL);
    t->have_out = 0;
}

static void block_end(dl_ncclt_t *t)
{
    if (!t->coll)
        return;
    flush(t);
    char bin[64];
    binary_name(t->coll, bin, sizeof(bin));
    if (t->unchecked)
        fprintf(t->f, "# Out of bounds values : N/A (not checked)\n");
    else
        fprintf(t->f, "# Out of bounds values : %llu %s\n", (unsigned long long)t->wrong,
                t->wrong ? "FAILED" : "OK");
    fprintf(t->f, "# Avg bus bandwidth    : %g \n#\n# Collective test concluded: %s\n#\n",
            t->bw_rows ? t->bw_sum / t->bw_rows : 0, bin);
    t->coll = NULL;
    fflush(t->f);
}

void dl_ncclt_row(dl_ncclt_t *t, const dl_result_t *r, const char *profile)
{
    if (t->coll != r->c.coll || strcmp(t->profile, profile) != 0) {
        block_end(t);
        block_start(t, r, profile);
    }
    /* A size's rows come out-of-place first, in-place next. */
    int twin = t->have_out && t->out.c.counts.bytes == r->c.counts.bytes &&
               t->out.c.dtype == r->c.dtype && t->out.c.op == r->c.op && t->out.group == r->group;
    if (r->c.place == DL_PLACE_IN && twin) {
        row(t, &t->out, r);
        t->have_out = 0;
        return;
    }
    flush(t);
    if (r->c.place == DL_PLACE_IN) {
        row(t, NULL, r);
        return;
    }
    t->out = *r;
    t->out.wrong_per_rank = NULL;
    t->out.rank_mean_s = t->out.rank_late_s = NULL;
    t->have_out = 1;
}

void dl_ncclt_free(dl_ncclt_t *t)
{
    if (!t)
        return;
    block_end(t);
    free(t);
}
