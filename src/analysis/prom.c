/* Prometheus text for node_exporter's textfile collector: one sample per
 * result and metric, labelled by what identifies the row, plus one info
 * series for the run. Written atomically: the collector may read the file
 * at any moment. */
#include "analysis.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    char *buf;
    size_t len, cap;
    int oom;
} sbuf_t;

static void put(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf_t *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = b->oom ? 0 : vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (b->oom || (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        char *nb = realloc(b->buf, b->cap * 2 + (size_t)n);
        if (!nb) {
            b->oom = 1;
            return;
        }
        b->buf = nb;
        b->cap = b->cap * 2 + (size_t)n;
    }
}

/* A label value: backslash, double quote and newline escaped. */
static void put_label(sbuf_t *b, const char *name, const char *v, int first)
{
    put(b, "%s%s=\"", first ? "" : ",", name);
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            put(b, "\\%c", *v);
        else if (*v == '\n')
            put(b, "\\n");
        else
            put(b, "%c", *v);
    }
    put(b, "\"");
}

static const struct {
    const char *name, *help;
} metrics[] = {
    {"dlcomm_busbw_gbps", "Bus bandwidth from the mean time, GB/s (1e9 bytes/s)"},
    {"dlcomm_algbw_gbps", "Algorithm bandwidth (bytes / mean time), GB/s"},
    {"dlcomm_time_us", "Mean time of one call, slowest rank, microseconds"},
    {"dlcomm_wrong_elements", "Wrong elements found by the result check, all ranks"},
};

static double metric_of(const dl_row_t *r, int m)
{
    return m == 0 ? r->busbw : m == 1 ? r->algbw : m == 2 ? r->time_us : r->wrong;
}

static void row_labels(sbuf_t *b, const dl_row_t *r, const char *host)
{
    char num[32];
    put_label(b, "profile", r->profile, 1);
    put_label(b, "collective", r->collective, 0);
    put_label(b, "dtype", r->dtype, 0);
    put_label(b, "op", r->op, 0);
    put_label(b, "placement", r->placement, 0);
    snprintf(num, sizeof(num), "%llu", (unsigned long long)r->bytes);
    put_label(b, "bytes", num, 0);
    snprintf(num, sizeof(num), "%d", r->ranks);
    put_label(b, "ranks", num, 0);
    if (r->group >= 0) { /* --split: one series per group, never two samples of one */
        snprintf(num, sizeof(num), "%d", r->group);
        put_label(b, "group", num, 0);
    }
    put_label(b, "host", host, 0);
    put_label(b, "modelled", r->modelled ? "true" : "false", 0);
}

static void run_info(sbuf_t *b, const dl_record_t *r)
{
    char num[32];
    put(b, "# HELP dlcomm_run_info The run these figures come from (value is always 1)\n"
           "# TYPE dlcomm_run_info gauge\ndlcomm_run_info{");
    put_label(b, "tool", r->tool, 1);
    put_label(b, "format", dl_fmt_name(r->fmt), 0);
    put_label(b, "hosts", r->hosts, 0);
    snprintf(num, sizeof(num), "%d", dl_an_run_ranks(r)); /* the rows' count: a model's ranks */
    put_label(b, "ranks", num, 0);
    snprintf(num, sizeof(num), "%d", r->ranks);
    put_label(b, "processes", num, 0);
    snprintf(num, sizeof(num), "%d", r->nhosts);
    put_label(b, "nodes", num, 0);
    put_label(b, "nccl_version", r->nccl, 0);
    put_label(b, "cuda_version", r->cuda, 0);
    put_label(b, "mpi", r->mpi, 0);
    put_label(b, "started", r->started, 0);
    put(b, "} 1\n# HELP dlcomm_profile_ok 1 when the profile finished ok or was skipped by "
           "design (the status label says which), 0 when it failed, timed out, crashed, was "
           "interrupted or had wrong data\n# TYPE dlcomm_profile_ok gauge\n");
    for (size_t i = 0; i < r->nprofs; i++) {
        put(b, "dlcomm_profile_ok{");
        put_label(b, "profile", r->profs[i].name, 1);
        put_label(b, "status", dl_rec_status_name(r->profs[i].status), 0);
        put(b, "} %d\n", !dl_rec_status_failed(r->profs[i].status)); /* skipped: no alert */
    }
}

/* What the library chose per row, as an info series beside the figures:
 * its own metric, so that a change of choice starts no new busbw series
 * (the rules' ranges and offsets stay whole); algo and proto are a handful
 * of values, channels a sample, never a label. Join it with
 *   dlcomm_busbw_gbps * on(profile, collective, dtype, op, placement, bytes,
 *   ranks, host) group_left(algo, proto) dlcomm_choice_info */
static void choices(sbuf_t *b, const dl_record_t *r, const char *host)
{
    static const char *const help[2] = {
        "What the library chose for the row's checked call (NCCL: its profiler; sim: modelled); "
        "value is always 1",
        "Channels the library used for the row's checked call"};
    static const char *const name[2] = {"dlcomm_choice_info", "dlcomm_choice_channels"};
    for (int m = 0; m < 2; m++) {
        put(b, "# HELP %s %s\n# TYPE %s gauge\n", name[m], help[m], name[m]);
        for (size_t i = 0; i < r->nrows; i++) {
            const dl_row_t *x = &r->rows[i];
            if ((!x->algo[0] && !x->proto[0]) || (m == 1 && x->nchannels <= 0))
                continue;
            put(b, "%s{", name[m]);
            row_labels(b, x, host);
            if (m == 0) {
                put_label(b, "algo", x->algo[0] ? x->algo : "unknown", 0);
                put_label(b, "proto", x->proto[0] ? x->proto : "unknown", 0);
                put_label(b, "from", x->choice_from[0] ? x->choice_from : "unknown", 0);
            }
            put(b, "} %d\n", m == 0 ? 1 : x->nchannels);
        }
    }
}

dl_status_t dl_an_prometheus(const char *path, const dl_record_t *r)
{
    sbuf_t b = {.buf = malloc(65536), .cap = 65536};
    if (!b.buf)
        return DL_ERR_NOMEM;
    /* The host label: the first host (rank 0's), where the run was launched. */
    char host[256];
    snprintf(host, sizeof(host), "%s", r->hosts);
    char *comma = strchr(host, ',');
    if (comma)
        *comma = '\0';
    run_info(&b, r);
    for (size_t m = 0; m < DL_ARRAY_SIZE(metrics); m++) {
        put(&b, "# HELP %s %s\n# TYPE %s gauge\n", metrics[m].name, metrics[m].help, metrics[m].name);
        for (size_t i = 0; i < r->nrows; i++) {
            double v = metric_of(&r->rows[i], (int)m);
            if (!isfinite(v))
                continue; /* unknown: no sample rather than a made-up one */
            put(&b, "%s{", metrics[m].name);
            row_labels(&b, &r->rows[i], host);
            put(&b, "} %.9g\n", v);
        }
    }
    choices(&b, r, host);
    dl_status_t st = b.oom ? DL_ERR_NOMEM : dl_write_atomic(path, b.buf, b.len);
    free(b.buf);
    return st;
}

/* ---- the builder other commands write their gauges with ---- */

struct dl_prom {
    sbuf_t b;
};

dl_prom_t *dl_prom_new(void)
{
    dl_prom_t *p = calloc(1, sizeof(*p));
    if (p && !(p->b.buf = malloc(4096)))
        p->b.oom = 1;
    if (p)
        p->b.cap = p->b.buf ? 4096 : 0;
    return p;
}

void dl_prom_gauge(dl_prom_t *p, const char *name, const char *help)
{
    if (!p)
        return;
    put(&p->b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

void dl_prom_sample(dl_prom_t *p, const char *name, double v, ...)
{
    if (!p)
        return;
    va_list ap;
    va_start(ap, v);
    put(&p->b, "%s", name);
    int first = 1;
    for (const char *k; (k = va_arg(ap, const char *));) {
        const char *val = va_arg(ap, const char *);
        if (!val) /* a label this sample does not have */
            continue;
        if (first)
            put(&p->b, "{");
        put_label(&p->b, k, val, first);
        first = 0;
    }
    va_end(ap);
    put(&p->b, "%s %.15g\n", first ? "" : "}", v); /* whole seconds stay whole */
}

dl_status_t dl_prom_write(dl_prom_t *p, const char *path)
{
    if (!p)
        return DL_ERR_NOMEM;
    dl_status_t st = p->b.oom ? DL_ERR_NOMEM : dl_write_atomic(path, p->b.buf, p->b.len);
    dl_prom_free(p);
    return st;
}

void dl_prom_free(dl_prom_t *p)
{
    if (p)
        free(p->b.buf);
    free(p);
}

dl_status_t dl_prom_target(const char *opt, const char *arg, const char *name, char *out,
                           size_t len)
{
    struct stat sb;
    int n = stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)
                ? snprintf(out, len, "%s/%s", arg, name)
                : snprintf(out, len, "%s", arg);
    if (n < 0 || (size_t)n >= len) {
        dl_err("%s %s: the path is too long", opt, arg);
        return DL_ERR_USAGE;
    }
    return dl_out_file_check(opt, out);
}
