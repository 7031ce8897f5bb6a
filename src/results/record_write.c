/* The one writer of the run record (run.json) and its CSV twin: the
 * document is built through these calls, a profile's status set by
 * dl_record_set_status alone. */
#include "results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../version.h"

cJSON *dl_record_head(const char *command)
{
    cJSON *run = cJSON_CreateObject();
    char ts[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_AddNumberToObject(run, "schema", DL_RECORD_SCHEMA);
    cJSON_AddStringToObject(run, "tool", "dlcomm");
    cJSON_AddStringToObject(run, "tool_version", dl_version());
    cJSON_AddStringToObject(run, "command", command);
    cJSON_AddStringToObject(run, "started", ts);
    cJSON_AddItemToObject(run, "versions", dl_versions_json());
    return run;
}

cJSON *dl_record_new(const char *command)
{
    cJSON *run = dl_record_head(command);
    cJSON_AddItemToObject(run, "profiles", cJSON_CreateArray());
    return run;
}

void dl_record_backend(cJSON *run, const char *name, const char *why, const dl_backend_setup_t *setup)
{
    cJSON *b = cJSON_AddObjectToObject(run, "backend");
    cJSON_AddStringToObject(b, "name", name);
    cJSON_AddStringToObject(b, "why", why);
    if (!setup || setup->ranks <= 0 || setup->nodes <= 0)
        return;
    /* A model's ranks are the run's ranks; the processes carry them. Its
     * system is named as its file is (the setup's facts say which). */
    cJSON *facts = setup->facts[0] ? cJSON_Parse(setup->facts) : NULL;
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(facts, "system");
    char sys[256] = "";
    if (cJSON_IsString(file)) {
        const char *base = strrchr(file->valuestring, '/');
        snprintf(sys, sizeof(sys), "%s", base ? base + 1 : file->valuestring);
    }
    cJSON_Delete(facts);
    char *dot = strstr(sys, ".json");
    if (dot && !dot[5])
        *dot = '\0';
    cJSON *m = cJSON_AddObjectToObject(b, "modelled");
    cJSON_AddStringToObject(m, "system", sys);
    cJSON_AddNumberToObject(m, "nodes", setup->nodes);
    cJSON_AddNumberToObject(m, "gpus_per_node", setup->ranks / setup->nodes);
    cJSON_AddNumberToObject(m, "ranks", setup->ranks);
}

cJSON *dl_record_add_profile(cJSON *run, const char *name, const char *backend, int modelled)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", name);
    cJSON_AddStringToObject(p, "backend", backend);
    cJSON_AddBoolToObject(p, "modelled", modelled);
    dl_record_set_status(p, DL_REC_RUNNING, NULL);
    cJSON_AddItemToObject(p, "results", cJSON_CreateArray());
    cJSON_AddItemToArray(cJSON_GetObjectItem(run, "profiles"), p);
    return p;
}

void dl_record_set_status(cJSON *profile, dl_rec_status_t st, const char *reason)
{
    if (!profile)
        return;
    cJSON *s = cJSON_CreateString(dl_rec_status_name(st));
    if (cJSON_GetObjectItemCaseSensitive(profile, "status"))
        cJSON_ReplaceItemInObjectCaseSensitive(profile, "status", s);
    else
        cJSON_AddItemToObject(profile, "status", s);
    if (!reason)
        return;
    cJSON *r = cJSON_CreateString(reason);
    if (cJSON_GetObjectItemCaseSensitive(profile, "reason"))
        cJSON_ReplaceItemInObjectCaseSensitive(profile, "reason", r);
    else
        cJSON_AddItemToObject(profile, "reason", r);
}

void dl_record_set_exit(cJSON *run, int code)
{
    cJSON *c = cJSON_CreateNumber(code);
    if (cJSON_GetObjectItemCaseSensitive(run, "exit_code"))
        cJSON_ReplaceItemInObjectCaseSensitive(run, "exit_code", c);
    else
        cJSON_AddItemToObject(run, "exit_code", c);
}

static cJSON *time_obj(const dl_stats_t *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "mean", t->mean * 1e6);
    cJSON_AddNumberToObject(o, "p50", t->p50 * 1e6);
    cJSON_AddNumberToObject(o, "p95", t->p95 * 1e6);
    cJSON_AddNumberToObject(o, "p99", t->p99 * 1e6);
    cJSON_AddNumberToObject(o, "min", t->min * 1e6);
    cJSON_AddNumberToObject(o, "max", t->max * 1e6);
    cJSON_AddNumberToObject(o, "stdev", t->stdev * 1e6);
    cJSON_AddNumberToObject(o, "ci95", t->ci95 * 1e6);
    return o;
}

/* What the backend chose, only where it said (absent: not known). */
static void add_choices(cJSON *o, const dl_result_t *r)
{
    const dl_choice_t *k = &r->choice;
    if (k->algo[0])
        cJSON_AddStringToObject(o, "algo", k->algo);
    if (k->proto[0])
        cJSON_AddStringToObject(o, "proto", k->proto);
    if (k->nchannels > 0)
        cJSON_AddNumberToObject(o, "nchannels", k->nchannels);
    if (k->from[0] && (k->algo[0] || k->proto[0]))
        cJSON_AddStringToObject(o, "choice_from", k->from);
    if (r->choice_mixed)
        cJSON_AddTrueToObject(o, "choice_mixed");
    if (r->shared_gpu > 1)
        cJSON_AddNumberToObject(o, "shared_gpu", r->shared_gpu);
}

void dl_record_add_row(cJSON *profile, const dl_result_t *r)
{
    const dl_case_t *c = &r->c;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "collective", c->coll->name);
    cJSON_AddStringToObject(o, "dtype", dl_dtype_names[c->dtype]);
    cJSON_AddStringToObject(o, "op", c->coll->has_op ? dl_op_names[c->op] : "none");
    cJSON_AddNumberToObject(o, "root", c->root);
    cJSON_AddStringToObject(o, "placement", c->place == DL_PLACE_IN ? "in" : "out");
    cJSON_AddNumberToObject(o, "bytes_requested", (double)c->bytes_requested);
    cJSON_AddNumberToObject(o, "bytes", (double)c->counts.bytes);
    cJSON_AddNumberToObject(o, "count", (double)c->counts.param_count);
    /* A model's rows are for the ranks it modelled; the processes that
     * carried it (and the per-rank arrays) are said apart. */
    int ranks = r->bus_ranks > 0 ? r->bus_ranks : r->nranks;
    cJSON_AddNumberToObject(o, "ranks", ranks);
    if (ranks != r->nranks)
        cJSON_AddNumberToObject(o, "processes", r->nranks);
    if (r->split.op != DL_SPLIT_NONE) { /* --split: whose row this is */
        cJSON_AddNumberToObject(o, "group", r->group);
        int *ranks = calloc((size_t)r->split.world + 1, sizeof(int));
        int n = ranks ? dl_split_members(&r->split, r->group, ranks) : 0;
        cJSON_AddItemToObject(o, "group_ranks", cJSON_CreateIntArray(ranks, n));
        free(ranks);
    }
    cJSON_AddNumberToObject(o, "iterations", (double)r->t.n);
    cJSON_AddBoolToObject(o, "converged", r->converged);
    cJSON_AddStringToObject(o, "stop", (unsigned)r->stop < DL_STOP_COUNT ? dl_stop_names[r->stop] : "?");
    cJSON_AddItemToObject(o, "time_us", time_obj(&r->t));
    cJSON_AddNumberToObject(o, "avg_us", r->avg_s * 1e6);
    cJSON_AddNumberToObject(o, "algbw_gbps", r->algbw_gbps);
    cJSON_AddNumberToObject(o, "busbw_gbps", r->busbw_gbps);
    cJSON_AddNumberToObject(o, "busbw_factor", c->coll->busbw_factor(ranks));
    cJSON_AddNumberToObject(o, "setup_s", r->setup_s);
    cJSON_AddNumberToObject(o, "timed_s", r->timed_s);
    add_choices(o, r);
    if (!r->checked) { /* not checked is not "0 wrong" */
        cJSON_AddNullToObject(o, "wrong");
        cJSON_AddNullToObject(o, "wrong_per_rank");
    } else {
        cJSON_AddNumberToObject(o, "wrong", (double)r->wrong);
    }
    if (r->checked && r->wrong_per_rank) {
        cJSON *a = cJSON_AddArrayToObject(o, "wrong_per_rank");
        for (int i = 0; i < r->nranks; i++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber((double)r->wrong_per_rank[i]));
    }
    if (r->rank_mean_s) {
        cJSON *a = cJSON_AddArrayToObject(o, "rank_time_us");
        for (int i = 0; i < r->nranks; i++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber(r->rank_mean_s[i] * 1e6));
    }
    if (r->rank_late_s) {
        cJSON *a = cJSON_AddArrayToObject(o, "rank_late_us");
        for (int i = 0; i < r->nranks; i++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber(r->rank_late_s[i] * 1e6));
        int *late = calloc((size_t)r->nranks, sizeof(int));
        cJSON *s = cJSON_AddArrayToObject(o, "stragglers");
        if (late && dl_result_stragglers(r, late))
            for (int i = 0; i < r->nranks; i++)
                if (late[i])
                    cJSON_AddItemToArray(s, cJSON_CreateNumber(i));
        free(late);
    }
    cJSON_AddItemToArray(cJSON_GetObjectItem(profile, "results"), o);
}

/* CSV columns: one place, used for the header and each row. */
static const char *const csv_cols[] = {
    "profile", "backend", "modelled", "collective", "dtype", "op", "root", "placement",
    "bytes_requested", "bytes", "count", "ranks", "iterations", "converged",
    "time_us_mean", "time_us_p50", "time_us_p95", "time_us_p99", "time_us_min",
    "time_us_max", "time_us_stdev", "time_us_ci95", "avg_us", "algbw_gbps", "busbw_gbps",
    "wrong", "group", "group_ranks", "stop",
};

static void csv_field(char **buf, size_t *len, size_t *cap, const cJSON *v, int first)
{
    /* RFC 4180: a field holding a comma, quote or line break is quoted,
     * its quotes doubled. An unknown figure (not finite) is left empty,
     * never written as 0 or nan. */
    char tmp[64];
    const char *s = tmp;
    if (cJSON_IsString(v))
        s = v->valuestring;
    else if (cJSON_IsBool(v))
        s = cJSON_IsTrue(v) ? "1" : "0";
    else if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        snprintf(tmp, sizeof(tmp), "%.17g", v->valuedouble);
    else
        tmp[0] = '\0';
    size_t sl = strlen(s), quotes = 0;
    for (const char *c = s; *c; c++)
        quotes += *c == '"';
    int quote = strpbrk(s, ",\"\r\n") != NULL;
    size_t need = sl + quotes + 4;
    if (*buf && *len + need + 1 > *cap) {
        *cap = (*cap + need) * 2;
        char *nb = realloc(*buf, *cap);
        if (!nb)
            free(*buf);
        *buf = nb;
    }
    if (!*buf) /* out of memory: the caller sees NULL */
        return;
    char *o = *buf + *len;
    if (!first)
        *o++ = ',';
    if (quote)
        *o++ = '"';
    for (const char *c = s; *c; c++) {
        if (*c == '"' && quote)
            *o++ = '"';
        *o++ = *c;
    }
    if (quote)
        *o++ = '"';
    *o = '\0';
    *len = (size_t)(o - *buf);
}

static const cJSON *lookup(const cJSON *prof, const cJSON *row, const char *col)
{
    if (strncmp(col, "time_us_", 8) == 0)
        return cJSON_GetObjectItem(cJSON_GetObjectItem(row, "time_us"), col + 8);
    if (strcmp(col, "profile") == 0)
        return cJSON_GetObjectItem(prof, "name");
    if (strcmp(col, "backend") == 0 || strcmp(col, "modelled") == 0)
        return cJSON_GetObjectItem(prof, col);
    return cJSON_GetObjectItem(row, col);
}

/* A list of ranks as one field: "0 2 4". */
static cJSON *ranks_text(const cJSON *a)
{
    char buf[4096] = "";
    size_t n = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a)
        if (n < sizeof(buf))
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d", n ? " " : "", v->valueint);
    return cJSON_CreateString(buf);
}

char *dl_record_csv(const cJSON *run)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    buf[0] = '\0';
    for (size_t i = 0; i < DL_ARRAY_SIZE(csv_cols); i++) {
        cJSON *h = cJSON_CreateString(csv_cols[i]);
        csv_field(&buf, &len, &cap, h, i == 0);
        cJSON_Delete(h);
    }
    if (!buf)
        return NULL;
    buf[len++] = '\n';
    const cJSON *prof;
    cJSON_ArrayForEach(prof, cJSON_GetObjectItem(run, "profiles"))
    {
        const cJSON *row;
        cJSON_ArrayForEach(row, cJSON_GetObjectItem(prof, "results"))
        {
            for (size_t i = 0; i < DL_ARRAY_SIZE(csv_cols); i++) {
                const cJSON *v = lookup(prof, row, csv_cols[i]);
                cJSON *text = cJSON_IsArray(v) ? ranks_text(v) : NULL;
                csv_field(&buf, &len, &cap, text ? text : v, i == 0);
                cJSON_Delete(text);
            }
            char *nb = buf && len + 2 > cap ? realloc(buf, cap *= 2) : buf;
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            buf[len++] = '\n';
        }
    }
    buf[len] = '\0';
    return buf;
}

dl_status_t dl_record_write(const cJSON *run, const char *dir)
{
    /* Bytes that are not UTF-8 (a folder or profile name as typed) become
     * U+FFFD: as the JSON escape inside run.json's strings (cJSON copies
     * bytes >= 0x80 as they are, only ever inside strings), as its UTF-8
     * bytes in run.csv. A strict reader reads both. */
    char path[4096];
    char *raw = cJSON_Print(run), *rawcsv = dl_record_csv(run);
    char *json = raw ? dl_utf8_fix(raw, "\\ufffd") : NULL;
    char *csv = rawcsv ? dl_utf8_fix(rawcsv, "\xef\xbf\xbd") : NULL;
    free(raw);
    free(rawcsv);
    dl_status_t st = json && csv ? DL_OK : DL_ERR_NOMEM;
    if (st == DL_OK) {
        snprintf(path, sizeof(path), "%s/run.csv", dir);
        st = dl_write_atomic(path, csv, strlen(csv));
    }
    if (st == DL_OK) {
        snprintf(path, sizeof(path), "%s/run.json", dir);
        st = dl_write_atomic(path, json, strlen(json));
    }
    if (st == DL_OK && strlen(json) > DL_RECORD_MAX_BYTES) /* the plan's estimate fell short: kept, and said */
        dl_warn("%s is %zu MiB, more than the %llu MiB report, compare and history read; "
                "run.csv holds the same rows", path, strlen(json) >> 20,
                (unsigned long long)(DL_RECORD_MAX_BYTES >> 20));
    free(json);
    free(csv);
    return st;
}
