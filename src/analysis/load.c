/* Loading a run whatever its format (a dlcomm run.json through the run
 * record's reader), and small helpers over the rows. */
#include "analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *dl_fmt_name(dl_fmt_t f)
{
    switch (f) {
    case DL_FMT_DLCOMM: return "dlcomm run.json";
    case DL_FMT_NCCLT_JSON: return "nccl-tests JSON";
    case DL_FMT_NCCLT_TEXT: return "nccl-tests text";
    case DL_FMT_TUNE: return "dlcomm tune record";
    }
    return "?";
}

/* First non-blank character decides JSON vs text; a JSON document with a
 * "schema" and "profiles" is dlcomm's, one with "results" holding
 * "out_of_place" entries is nccl-tests'. */
static dl_status_t parse_text(const char *s, size_t len, dl_record_t *out)
{
    if (strlen(s) != len) {
        dl_err("%s: not a run (binary data)", out->path);
        return DL_ERR_INPUT;
    }
    const char *p = s;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    dl_status_t st;
    if (*p == '{' && strstr(s, "\"out_of_place\"") && !strstr(s, "\"profiles\"")) {
        out->fmt = DL_FMT_NCCLT_JSON;
        st = dl_an_read_ncclt_json(s, out);
    } else if (*p == '{') {
        out->fmt = DL_FMT_DLCOMM;
        st = dl_record_parse(s, len, out);
    } else {
        out->fmt = DL_FMT_NCCLT_TEXT;
        st = dl_an_read_ncclt_text(s, out);
    }
    if (st == DL_OK && out->nrows == 0 && out->nprofs == 0) {
        dl_err("%s: no results found (%s)", out->path, dl_fmt_name(out->fmt));
        st = DL_ERR_INPUT;
    }
    if (st != DL_OK)
        dl_record_free(out);
    return st;
}

dl_status_t dl_an_parse(const char *buf, size_t len, const char *name, dl_record_t *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->path, sizeof(out->path), "%s", name);
    char *s = malloc(len + 1);
    if (!s) {
        dl_err("%s: out of memory while reading it", name);
        return DL_ERR_NOMEM;
    }
    memcpy(s, buf, len);
    s[len] = '\0';
    dl_status_t st = parse_text(s, len, out);
    free(s);
    return st;
}

/* "LOG@K", where no file of that name is there and LOG is: the K-th run
 * of a log holding several (K from 1); file gets LOG. 0: a plain path. */
static int run_of_log(const char *path, char *file, size_t len)
{
    const char *at = strrchr(path, '@');
    struct stat sb;
    if (!at || !at[1] || strspn(at + 1, "0123456789") != strlen(at + 1) || strlen(at + 1) > 6 ||
        stat(path, &sb) == 0)
        return 0;
    snprintf(file, len, "%.*s", (int)(at - path), path);
    int k = atoi(at + 1);
    return k > 0 && stat(file, &sb) == 0 && S_ISREG(sb.st_mode) ? k : 0;
}

/* The text is read where it lies: no copy of a large file. */
dl_status_t dl_an_load(const char *path, dl_record_t *out)
{
    char *data = NULL, file[1024];
    size_t len = 0;
    struct stat sb;
    memset(out, 0, sizeof(*out));
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) { /* a run folder: its run.json */
        snprintf(file, sizeof(file), "%s/run.json", path);
        path = file;
    } else if ((out->part = run_of_log(path, file, sizeof(file))) > 0) {
        path = file;
    }
    snprintf(out->path, sizeof(out->path), "%.*s", (int)sizeof(out->path) - 1, path);
    dl_status_t st = dl_read_file(path, &data, &len);
    if (st == DL_ERR_NOMEM)
        dl_err("%s: out of memory while reading it", path);
    else if (st != DL_OK)
        dl_err("%s: cannot read it (%s)", path, dl_read_error());
    else
        st = parse_text(data, len, out);
    free(data);
    if (st == DL_OK && out->part > 0 && out->fmt != DL_FMT_NCCLT_TEXT) {
        dl_err("%s@%d: only a nccl-tests text log holds several runs", out->path, out->part);
        dl_record_free(out);
        st = DL_ERR_INPUT;
    }
    if (st == DL_OK && out->part > 0) /* shown as the user named it */
        snprintf(out->path + strlen(out->path), sizeof(out->path) - strlen(out->path), "@%d",
                 out->part);
    return st;
}

double dl_an_spread(const dl_row_t *r)
{
    if (isfinite(r->ci95_us) && r->ci95_us >= 0)
        return r->ci95_us;
    if (isfinite(r->stdev_us) && r->stdev_us >= 0 && r->iterations > 1)
        return dl_t95((size_t)r->iterations - 1) * r->stdev_us / sqrt((double)r->iterations);
    return NAN;
}

/* The ranks a sim run modelled: its record says, else its rows. */
static int modelled_ranks(const dl_record_t *r)
{
    if (r->model_ranks)
        return r->model_ranks;
    int m = 0;
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].modelled && r->rows[i].ranks > m)
            m = r->rows[i].ranks;
    return m;
}

int dl_an_run_ranks(const dl_record_t *r)
{
    int m = modelled_ranks(r);
    return m ? m : r->ranks;
}

void dl_an_ranks_text(const dl_record_t *r, char *buf, size_t len)
{
    int m = modelled_ranks(r);
    char hosts[32];
    snprintf(hosts, sizeof(hosts), "%d host%s", r->nhosts ? r->nhosts : 1, r->nhosts > 1 ? "s" : "");
    if (!m) {
        snprintf(buf, len, "%d rank%s on %s", r->ranks, r->ranks == 1 ? "" : "s", hosts);
        if (r->shared_gpu > 1) /* DLCOMM_SHARED_GPU: never to be read as a fabric's figures */
            snprintf(buf + strlen(buf), len - strlen(buf),
                     ", %d sharing each GPU as NCCL hosts of their own: shared-GPU socket "
                     "figures (NCCL's code paths), not fabric bandwidth", r->shared_gpu);
        return;
    }
    char nodes[32] = "";
    if (r->model_nodes)
        snprintf(nodes, sizeof(nodes), " (%d node%s)", r->model_nodes, r->model_nodes == 1 ? "" : "s");
    snprintf(buf, len, "%d modelled ranks%s, carried by %d process%s on %s", m, nodes, r->ranks,
             r->ranks == 1 ? "" : "es", hosts);
}

const char *dl_an_env(const dl_record_t *r, const char *key)
{
    for (size_t i = 0; i < r->nenv; i++)
        if (strcmp(r->env[i].key, key) == 0)
            return r->env[i].value;
    return "";
}

void dl_an_describe(const dl_record_t *r, char *buf, size_t len)
{
    char ranks[256];
    dl_an_ranks_text(r, ranks, sizeof(ranks));
    int n = snprintf(buf, len, "%s%s; %s", r->nhosts > 1 ? "hosts " : "host ",
                     r->hosts[0] ? r->hosts : "?", ranks);
    if (n >= 0 && (size_t)n < len && r->tool[0])
        n += snprintf(buf + n, len - (size_t)n, "; %s", r->tool);
    if (n >= 0 && (size_t)n < len && r->nccl[0])
        n += snprintf(buf + n, len - (size_t)n, "; NCCL %s", r->nccl);
    if (n >= 0 && (size_t)n < len && r->cuda[0])
        n += snprintf(buf + n, len - (size_t)n, "; CUDA %s", r->cuda);
    if (n >= 0 && (size_t)n < len && r->mpi[0])
        snprintf(buf + n, len - (size_t)n, "; %s", r->mpi);
}

int dl_an_row_cmp(const dl_row_t *a, const dl_row_t *b, int flags)
{
    int c;
    if ((flags & DL_ROW_PROFILE) && (c = strcmp(a->profile, b->profile)))
        return c;
    if ((c = strcmp(a->collective, b->collective)) || (c = strcmp(a->dtype, b->dtype)) ||
        (c = strcmp(a->op, b->op)) || (c = strcmp(a->placement, b->placement)))
        return c;
    uint64_t x = flags & DL_ROW_ASKED && a->asked ? a->asked : a->bytes;
    uint64_t y = flags & DL_ROW_ASKED && b->asked ? b->asked : b->bytes;
    if (x != y)
        return x < y ? -1 : 1;
    if (a->group != b->group) /* --split: group g pairs with group g only */
        return a->group < b->group ? -1 : 1;
    return a->ranks < b->ranks ? -1 : a->ranks > b->ranks;
}

const char *dl_an_place_name(const char *placement)
{
    return strcmp(placement, "in") == 0 ? "in-place" : strcmp(placement, "out") == 0 ? "out-of-place"
                                                                                     : placement;
}
