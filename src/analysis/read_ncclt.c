/* Readers of nccl-tests output: the -J JSON document and the text table it
 * prints on stdout. Each size gives two rows, out-of-place and in-place;
 * times are in us, bandwidths in GB/s; nccl-tests keeps no spread, so
 * ci95 and stdev stay unknown (NAN) and compare judges such rows by its
 * threshold alone. */
#include "analysis.h"
#include "ncclt.h"

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

/* nccl-tests measures NCCL: its rows compare with the nccl backend's. */
dl_rec_profile_t *dl_ncclt_prof(dl_record_t *r)
{
    dl_rec_profile_t *p = dl_rec_push_profile(r, "nccl-tests");
    if (p)
        snprintf(p->backend, sizeof(p->backend), "nccl");
    return p;
}

void dl_ncclt_nccl_code(double code, char *out, size_t len)
{
    if (!(code >= 10000 && code < 1e7))
        return;
    long c = (long)code;
    snprintf(out, len, "%ld.%ld.%ld", c / 10000, c % 10000 / 100, c % 100);
}

void dl_ncclt_add_host(dl_record_t *r, const char *host)
{
    size_t hl = strlen(host), n = strlen(r->hosts);
    for (const char *p = r->hosts; (p = strstr(p, host)); p += hl)
        if ((p == r->hosts || p[-1] == ',') && (p[hl] == ',' || p[hl] == '\0'))
            return;
    snprintf(r->hosts + n, sizeof(r->hosts) - n, "%s%s", n ? "," : "", host);
    r->nhosts++;
}

dl_status_t dl_ncclt_add_pair(dl_record_t *r, dl_row_t *row, const double v[2][4])
{
    static const char *const place[2] = {"out", "in"};
    for (int i = 0; i < 2; i++) {
        if (isnan(v[i][0])) /* a side not run (trace replay: in-place only) */
            continue;
        snprintf(row->placement, sizeof(row->placement), "%s", place[i]);
        row->time_us = v[i][0];
        row->algbw = v[i][1];
        row->busbw = v[i][2];
        row->wrong = v[i][3];
        char what[96];
        if (dl_rec_row_impossible(row, what, sizeof(what))) {
            dl_err("%s: the %s-place row of %llu bytes has %s, which no measurement gives",
                   r->path, i ? "in" : "out-of", (unsigned long long)row->bytes, what);
            return DL_ERR_INPUT;
        }
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
    dl_ncclt_nccl_code(jnum(doc, "nccl_version"), r->nccl, sizeof(r->nccl));
    const cJSON *dev;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(doc, "config"), "devices"))
    {
        dl_ncclt_add_host(r, jstr(dev, "hostname", "?"));
        r->ranks++;
    }
    if (r->ranks == 0)
        r->ranks = 1;
    snprintf(r->tool, sizeof(r->tool), "nccl-tests"); /* the JSON does not say which */
    snprintf(r->started, sizeof(r->started), "%s", jstr(doc, "start_time", ""));
}

/* -C 1 writes "cpu_time" where "time" was: the host's time per call, not
 * the collective's, so such a file gives no rows to compare. */
static int json_cputime(const cJSON *results)
{
    const cJSON *e = cJSON_GetArrayItem(results, 0);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "out_of_place");
    if (!cJSON_IsObject(s))
        s = cJSON_GetObjectItemCaseSensitive(e, "in_place");
    return cJSON_GetObjectItemCaseSensitive(s, "cpu_time") &&
           !cJSON_GetObjectItemCaseSensitive(s, "time");
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
    if (json_cputime(results)) {
        cJSON_Delete(doc);
        dl_err("%s: nccl-tests ran with -C 1 (cpu_time: the host's time per call, not the "
               "collective's); rerun it without -C to compare its times", r->path);
        return DL_ERR_INPUT;
    }
    char coll[32];
    json_header(doc, r, coll, sizeof(coll));
    dl_status_t st = dl_ncclt_prof(r) ? DL_OK : DL_ERR_NOMEM;
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
        st = dl_ncclt_add_pair(r, &row, v);
    }
    cJSON_Delete(doc);
    return st;
}
