/* Readers of nccl-tests output: the -J JSON document and the text table it
 * prints on stdout. Each size gives two rows, out-of-place and in-place;
 * times are in us, bandwidths in GB/s; nccl-tests keeps no spread, so
 * ci95 and stdev stay unknown (NAN) and compare judges such rows by its
 * threshold alone. */
#include "analysis.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void dl_an_ncclt_coll(const char *s, char *out, size_t len)
{
    static const char *const map[][2] = {
        {"all_reduce", "allreduce"},         {"all_gather", "allgather"},
        {"reduce_scatter", "reducescatter"}, {"alltoall", "alltoall"},
        {"sendrecv", "sendrecv"},            {"broadcast", "broadcast"},
        {"reduce", "reduce"},                {"gather", "gather"},
        {"scatter", "scatter"},              {"hypercube", "hypercube"},
    };
    const char *base = strrchr(s, '/');
    base = base ? base + 1 : s;
    for (size_t i = 0; i < DL_ARRAY_SIZE(map); i++) {
        size_t n = strlen(map[i][0]);
        if (strncmp(base, map[i][0], n) == 0 && (base[n] == '\0' || base[n] == '_')) {
            snprintf(out, len, "%s", map[i][1]);
            return;
        }
    }
    snprintf(out, len, "%s", base[0] ? base : "unknown");
}

void dl_an_ncclt_dtype(const char *s, char *out, size_t len)
{
    static const char *const map[][2] = {
        {"float", "float32"}, {"half", "float16"},  {"double", "float64"},
        {"bfloat16", "bfloat16"}, {"f8e4m3", "fp8e4m3"}, {"f8e5m2", "fp8e5m2"},
    };
    for (size_t i = 0; i < DL_ARRAY_SIZE(map); i++)
        if (strcmp(s, map[i][0]) == 0) {
            snprintf(out, len, "%s", map[i][1]);
            return;
        }
    snprintf(out, len, "%s", s);
}

/* 22809 -> "2.28.9" (NCCL_VERSION_CODE = major*10000 + minor*100 + patch). */
/* nccl-tests measures NCCL: its rows compare with the nccl backend's. */
static dl_rec_profile_t *ncclt_prof(dl_record_t *r)
{
    dl_rec_profile_t *p = dl_rec_push_profile(r, "nccl-tests");
    if (p)
        snprintf(p->backend, sizeof(p->backend), "nccl");
    return p;
}

static void nccl_code(double code, char *out, size_t len)
{
    if (!(code >= 10000 && code < 1e7))
        return;
    long c = (long)code;
    snprintf(out, len, "%ld.%ld.%ld", c / 10000, c % 10000 / 100, c % 100);
}

static void add_host(dl_record_t *r, const char *host)
{
    size_t hl = strlen(host), n = strlen(r->hosts);
    for (const char *p = r->hosts; (p = strstr(p, host)); p += hl)
        if ((p == r->hosts || p[-1] == ',') && (p[hl] == ',' || p[hl] == '\0'))
            return;
    snprintf(r->hosts + n, sizeof(r->hosts) - n, "%s%s", n ? "," : "", host);
    r->nhosts++;
}

/* Two rows (out, in) of one size; a side with no time is left out. */
static dl_status_t add_pair(dl_record_t *r, dl_row_t *row, const double v[2][4])
{
    static const char *const place[2] = {"out", "in"};
    for (int i = 0; i < 2; i++) {
        if (!(v[i][0] > 0))
            continue;
        snprintf(row->placement, sizeof(row->placement), "%s", place[i]);
        row->time_us = v[i][0];
        row->algbw = v[i][1];
        row->busbw = v[i][2];
        row->wrong = v[i][3];
        dl_status_t st = dl_rec_push_row(r, row);
        if (st != DL_OK)
            return st;
    }
    return DL_OK;
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsString(v) && v->valuestring)
        return strtod(v->valuestring, NULL);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

static const char *jstr(const cJSON *o, const char *k, const char *def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : def;
}

static void json_header(const cJSON *doc, dl_record_t *r, char *coll, size_t clen)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(doc, "args");
    const cJSON *a0 = cJSON_GetArrayItem(args, 0);
    dl_an_ncclt_coll(cJSON_IsString(a0) && a0->valuestring ? a0->valuestring : "unknown", coll,
                     clen);
    nccl_code(jnum(doc, "nccl_version"), r->nccl, sizeof(r->nccl));
    const cJSON *dev;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(doc, "config"), "devices"))
    {
        add_host(r, jstr(dev, "hostname", "?"));
        r->ranks++;
    }
    if (r->ranks == 0)
        r->ranks = 1;
    snprintf(r->tool, sizeof(r->tool), "nccl-tests"); /* the JSON does not say which */
    snprintf(r->started, sizeof(r->started), "%s", jstr(doc, "start_time", ""));
}

dl_status_t dl_an_read_ncclt_json(const char *buf, dl_record_t *r)
{
    cJSON *doc = dl_json_parse_whole(buf, strlen(buf));
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results");
    if (!cJSON_IsObject(doc) || !cJSON_IsArray(results)) {
        cJSON_Delete(doc);
        dl_err("%s: not valid nccl-tests JSON (no results array)", r->path);
        return DL_ERR_INPUT;
    }
    char coll[32];
    json_header(doc, r, coll, sizeof(coll));
    dl_status_t st = ncclt_prof(r) ? DL_OK : DL_ERR_NOMEM;
    const cJSON *e;
    cJSON_ArrayForEach(e, results)
    {
        if (st != DL_OK)
            break;
        double size = jnum(e, "size");
        if (!(size >= 0 && size < 1.8e19))
            continue;
        dl_row_t row;
        dl_rec_row_init(&row);
        snprintf(row.profile, sizeof(row.profile), "nccl-tests");
        snprintf(row.collective, sizeof(row.collective), "%s", coll);
        dl_an_ncclt_dtype(jstr(e, "type", "?"), row.dtype, sizeof(row.dtype));
        snprintf(row.op, sizeof(row.op), "%s", jstr(e, "redop", "none"));
        row.bytes = (uint64_t)size;
        row.ranks = r->ranks;
        double it = jnum(e, "actual_iterations");
        row.iterations = it >= 0 && it < 1e15 ? (long)it : 0;
        double v[2][4];
        static const char *const side[2] = {"out_of_place", "in_place"};
        for (int i = 0; i < 2; i++) {
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, side[i]);
            v[i][0] = jnum(s, "time");
            v[i][1] = jnum(s, "alg_bw");
            v[i][2] = jnum(s, "bus_bw");
            v[i][3] = jnum(s, "nwrong");
        }
        st = add_pair(r, &row, v);
    }
    cJSON_Delete(doc);
    return st;
}

/* ---- text ---- */

static int parse_num(const char *s, double *v)
{
    char *end;
    if (strcmp(s, "N/A") == 0) {
        *v = NAN;
        return 1;
    }
    *v = strtod(s, &end);
    return end != s && *end == '\0' && !isinf(*v);
}

/* A table row: size count type redop [root] then 4 figures per placement. */
static dl_status_t text_row(dl_record_t *r, char *line, const char *coll)
{
    char *tok[16], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(line, " \t\r", &save); t && n < 16; t = strtok_r(NULL, " \t\r", &save))
        tok[n++] = t;
    if (n != 12 && n != 13)
        return DL_OK;
    double size, count, v[2][4];
    if (!parse_num(tok[0], &size) || !parse_num(tok[1], &count) || !(size >= 0 && size < 1.8e19))
        return DL_OK;
    int f = n - 8;
    for (int i = 0; i < 8; i++)
        if (!parse_num(tok[f + i], &v[i / 4][i % 4]))
            return DL_OK;
    dl_row_t row;
    dl_rec_row_init(&row);
    snprintf(row.profile, sizeof(row.profile), "nccl-tests");
    snprintf(row.collective, sizeof(row.collective), "%s", coll);
    dl_an_ncclt_dtype(tok[2], row.dtype, sizeof(row.dtype));
    snprintf(row.op, sizeof(row.op), "%s", tok[3]);
    row.bytes = (uint64_t)size;
    row.ranks = r->ranks ? r->ranks : 1;
    return add_pair(r, &row, v);
}

static void text_header(dl_record_t *r, const char *line, char *coll, size_t clen, int *iters)
{
    const char *p;
    char word[128];
    if ((p = strstr(line, "Collective test starting:")) &&
        sscanf(p + 25, " %127s", word) == 1)
        dl_an_ncclt_coll(word, coll, clen);
    if ((p = strstr(line, "nccl-tests version ")) && sscanf(p + 19, "%31s", word) == 1)
        snprintf(r->tool, sizeof(r->tool), "nccl-tests %.30s", word);
    if ((p = strstr(line, "nccl-library=")))
        nccl_code(strtod(p + 13, NULL), r->nccl, sizeof(r->nccl));
    if ((p = strstr(line, " iters: ")))
        *iters = atoi(p + 8);
    if (strncmp(line, "#  Rank ", 8) == 0 && (p = strstr(line, " on ")) &&
        sscanf(p + 4, " %127s", word) == 1) {
        add_host(r, word);
        r->ranks++;
    }
}

dl_status_t dl_an_read_ncclt_text(const char *buf, dl_record_t *r)
{
    char coll[32] = "unknown", line[1024];
    int iters = 0, runs = 0;
    dl_status_t st = DL_OK;
    /* One file, one run: concatenated logs would count every rank twice
     * and mix two runs' rows, so they are refused, not half-read. */
    for (const char *q = buf; (q = strstr(q, "Collective test starting:")); q++)
        runs++;
    if (runs > 1) {
        dl_err("%s: holds %d nccl-tests runs (concatenated logs); give each run its own file",
               r->path, runs);
        return DL_ERR_INPUT;
    }
    for (const char *p = buf; *p && st == DL_OK;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
        p += len + (nl ? 1 : 0);
        if (line[0] == '#') {
            text_header(r, line, coll, sizeof(coll), &iters);
            continue;
        }
        if (r->nprofs == 0 && !ncclt_prof(r))
            return DL_ERR_NOMEM;
        st = text_row(r, line, coll);
    }
    for (size_t i = 0; i < r->nrows; i++)
        r->rows[i].iterations = iters > 0 ? iters : 0;
    if (st == DL_OK && r->nrows == 0) {
        dl_err("%s: not a dlcomm run.json, nccl-tests JSON or nccl-tests output", r->path);
        return DL_ERR_INPUT;
    }
    if (!r->tool[0])
        snprintf(r->tool, sizeof(r->tool), "nccl-tests");
    return st;
}
