/* The one reader of dlcomm's run.json (record.h; docs/results.md and
 * docs/schema/run.schema.json). The text is walked member by member: the
 * walker checks the structure (braces, brackets, keys, commas), cJSON each
 * value on its own, and a row is parsed, read and dropped before the next,
 * so no tree of the whole file is ever built. */
#include "record.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *str_of(const cJSON *o, const char *key, const char *def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : def;
}

static double num_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

/* A version may be a string, a number, or an object with "version". */
static void version_of(const cJSON *fp, const char *key, char *out, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(fp, key);
    if (cJSON_IsObject(v))
        v = cJSON_GetObjectItemCaseSensitive(v, "version");
    if (cJSON_IsString(v) && v->valuestring)
        snprintf(out, len, "%s", v->valuestring);
    else if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        snprintf(out, len, "%g", v->valuedouble);
}

/* An object of strings as settings, appended to *v (n of them). */
static dl_status_t read_kvs(const cJSON *obj, dl_kv_t **v, size_t *n)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, obj)
    {
        if (!cJSON_IsString(e) || !e->string)
            continue;
        dl_kv_t *nv = realloc(*v, (*n + 1) * sizeof(**v));
        if (!nv)
            return DL_ERR_NOMEM;
        *v = nv;
        snprintf(nv[*n].key, sizeof(nv[*n].key), "%s", e->string);
        snprintf(nv[*n].value, sizeof(nv[*n].value), "%s", e->valuestring);
        (*n)++;
    }
    return DL_OK;
}

/* The stragglers the run named, when it judged them (a list, maybe empty). */
static dl_status_t read_stragglers(const cJSON *run, dl_record_t *out)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(run, "stragglers"), *e;
    out->has_strag = cJSON_IsArray(a);
    cJSON_ArrayForEach(e, a)
    {
        dl_strag_t *v = realloc(out->strag, (out->nstrag + 1) * sizeof(*v));
        if (!v)
            return DL_ERR_NOMEM;
        out->strag = v;
        dl_strag_t *s = &v[out->nstrag++];
        double rk = num_of(e, "rank"), rows = num_of(e, "rows"), of = num_of(e, "of_rows");
        s->rank = rk >= 0 && rk < 1e7 ? (int)rk : -1;
        s->rows = rows >= 0 && rows < 1e9 ? (int)rows : 0;
        s->of_rows = of >= 0 && of < 1e9 ? (int)of : 0;
        s->late_us = num_of(e, "late_us");
        snprintf(s->host, sizeof(s->host), "%s", str_of(e, "host", "?"));
    }
    return DL_OK;
}

/* Each rank's GPU, the backend and why, a model's size. */
static void read_where(const cJSON *run, const cJSON *fp, dl_record_t *out)
{
    const cJSON *g;
    size_t n = 0;
    int r = 0;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(fp, "rank_gpus"))
    {
        if (cJSON_IsString(g) && g->valuestring[0] && n < sizeof(out->rank_gpus))
            n += (size_t)snprintf(out->rank_gpus + n, sizeof(out->rank_gpus) - n, "%s%d:%s",
                                  n ? " " : "", r, g->valuestring);
        r++;
    }
    const cJSON *be = cJSON_GetObjectItemCaseSensitive(run, "backend");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(be, "modelled");
    snprintf(out->backend, sizeof(out->backend), "%s", str_of(be, "name", ""));
    snprintf(out->backend_why, sizeof(out->backend_why), "%s", str_of(be, "why", ""));
    double mr = num_of(m, "ranks"), mn = num_of(m, "nodes");
    out->model_ranks = mr >= 1 && mr < 1e7 ? (int)mr : 0;
    out->model_nodes = mn >= 1 && mn < 1e6 ? (int)mn : 0;
}

void dl_rec_read_header(const cJSON *run, dl_record_t *out)
{
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(run, "fingerprint");
    const cJSON *h;
    size_t n = 0;
    cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(fp, "hosts"))
    {
        const char *name = str_of(h, "name", "?");
        n += (size_t)snprintf(out->hosts + n, n < sizeof(out->hosts) ? sizeof(out->hosts) - n : 0,
                              "%s%s", out->nhosts ? "," : "", name);
        if (n >= sizeof(out->hosts))
            n = sizeof(out->hosts);
        out->nhosts++;
    }
    double nodes = num_of(fp, "nodes"), ranks = num_of(fp, "ranks");
    if (isfinite(nodes) && nodes > out->nhosts && nodes < 1e6)
        out->nhosts = (int)nodes;
    if (isfinite(ranks) && ranks > 0 && ranks < 1e7)
        out->ranks = (int)ranks;
    double shared = num_of(fp, "shared_gpu");
    out->shared_gpu = isfinite(shared) && shared >= 2 && shared < 1e7 ? (int)shared : 0;
    snprintf(out->kernel, sizeof(out->kernel), "%s",
             str_of(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(fp, "hosts"), 0), "kernel", ""));
    const cJSON *mpi = cJSON_GetObjectItemCaseSensitive(fp, "mpi");
    snprintf(out->mpi, sizeof(out->mpi), "%s", str_of(mpi, "library", ""));
    version_of(fp, "nccl", out->nccl, sizeof(out->nccl));
    if (!out->nccl[0])
        version_of(fp, "nccl_version", out->nccl, sizeof(out->nccl));
    version_of(fp, "cuda", out->cuda, sizeof(out->cuda));
    version_of(fp, "driver", out->driver, sizeof(out->driver));
    snprintf(out->tool, sizeof(out->tool), "%s %s", str_of(run, "tool", "dlcomm"),
             str_of(run, "tool_version", "?"));
    snprintf(out->started, sizeof(out->started), "%s", str_of(run, "started", ""));
    snprintf(out->system, sizeof(out->system), "%s", str_of(run, "system", ""));
    read_where(run, fp, out);
}

/* NCCL_ALGO / NCCL_PROTO from the profile's env, else from its name. */
static void read_forced(const cJSON *p, dl_rec_profile_t *pr)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(p, "env");
    snprintf(pr->algo, sizeof(pr->algo), "%s", str_of(env, "NCCL_ALGO", ""));
    snprintf(pr->proto, sizeof(pr->proto), "%s", str_of(env, "NCCL_PROTO", ""));
    static const char *const algos[] = {"ring", "tree", "nvlstree", "nvls", "collnet"};
    static const char *const protos[] = {"ll128", "ll", "simple"};
    char lower[64];
    size_t i;
    for (i = 0; pr->name[i] && i < sizeof(lower) - 1; i++)
        lower[i] = (char)(pr->name[i] >= 'A' && pr->name[i] <= 'Z' ? pr->name[i] + 32 : pr->name[i]);
    lower[i] = '\0';
    for (i = 0; !pr->algo[0] && i < DL_ARRAY_SIZE(algos); i++)
        if (strstr(lower, algos[i]))
            snprintf(pr->algo, sizeof(pr->algo), "%s", algos[i]);
    for (i = 0; !pr->proto[0] && i < DL_ARRAY_SIZE(protos); i++)
        if (strstr(lower, protos[i]))
            snprintf(pr->proto, sizeof(pr->proto), "%s", protos[i]);
}

/* What NCCL said it used, the contradictions with the profile, and what
 * the backend reported (GPU, versions, the sim's system). */
static void read_observed(const cJSON *p, dl_rec_profile_t *pr, dl_record_t *out)
{
    const cJSON *bi = cJSON_GetObjectItemCaseSensitive(p, "backend_info");
    const cJSON *ot = cJSON_GetObjectItemCaseSensitive(p, "observed_transports");
    snprintf(pr->backend, sizeof(pr->backend), "%s", str_of(p, "backend", ""));
    snprintf(pr->system, sizeof(pr->system), "%s", str_of(bi, "system", ""));
    double mn = num_of(bi, "modelled_nodes");
    pr->sim_nodes = mn >= 1 && mn < 1e6 ? (int)mn : 0;
    if (!out->gpu[0])
        snprintf(out->gpu, sizeof(out->gpu), "%s", str_of(bi, "gpu", ""));
    size_t n = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(ot, "transports"))
        if (cJSON_IsNumber(t) && n < sizeof(pr->used))
            n += (size_t)snprintf(pr->used + n, sizeof(pr->used) - n, "%s%s %g", n ? ", " : "",
                                  t->string, t->valuedouble);
    const char *net = str_of(ot, "network", "");
    if (ot && n < sizeof(pr->used))
        snprintf(pr->used + n, sizeof(pr->used) - n, "%s%s%s%s", n ? " channels" : "no channels",
                 net[0] ? "; network " : "", net,
                 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ot, "gdr")) ? "; GDR" : "");
    n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, "transport_contradictions"))
    {
        double rk = num_of(c, "rank");
        if (n < sizeof(pr->contra))
            n += (size_t)snprintf(pr->contra + n, sizeof(pr->contra) - n, "%srank %g: %s",
                                  n ? "; " : "", rk, str_of(c, "reason", "?"));
    }
}

/* A row into out: its profile, and the processes' ranks where the row has
 * none, are filled in when its profile and the fingerprint are read. */
static dl_status_t read_result(const cJSON *o, dl_record_t *out, char *why, size_t wlen)
{
    dl_row_t row;
    dl_rec_row_init(&row);
    double bytes = num_of(o, "bytes"), ranks = num_of(o, "ranks");
    const char *coll = str_of(o, "collective", NULL);
    if (!coll || !(bytes >= 0 && bytes < 1.8e19))
        return DL_ERR_INPUT;
    snprintf(row.collective, sizeof(row.collective), "%s", coll);
    snprintf(row.dtype, sizeof(row.dtype), "%s", str_of(o, "dtype", "?"));
    snprintf(row.op, sizeof(row.op), "%s", str_of(o, "op", "none"));
    snprintf(row.placement, sizeof(row.placement), "%s", str_of(o, "placement", "out"));
    row.bytes = (uint64_t)bytes;
    double asked = num_of(o, "bytes_requested");
    row.asked = asked >= 0 && asked < 1.8e19 ? (uint64_t)asked : 0;
    row.ranks = ranks >= 1 && ranks < 1e7 ? (int)ranks : 0;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "time_us");
    row.time_us = num_of(t, "mean");
    row.p50_us = num_of(t, "p50");
    row.stdev_us = num_of(t, "stdev");
    row.ci95_us = num_of(t, "ci95");
    row.algbw = num_of(o, "algbw_gbps");
    row.busbw = num_of(o, "busbw_gbps");
    double it = num_of(o, "iterations");
    row.iterations = it >= 0 && it < 1e15 ? (long)it : 0;
    row.wrong = num_of(o, "wrong");
    double g = num_of(o, "group");
    row.group = g >= 0 && g < 1e7 ? (int)g : -1;
    snprintf(row.algo, sizeof(row.algo), "%s", str_of(o, "algo", ""));
    snprintf(row.proto, sizeof(row.proto), "%s", str_of(o, "proto", ""));
    double nch = num_of(o, "nchannels");
    row.nchannels = nch >= 1 && nch < 1e6 ? (int)nch : 0;
    snprintf(row.choice_from, sizeof(row.choice_from), "%s", str_of(o, "choice_from", ""));
    row.choice_mixed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "choice_mixed"));
    char what[96];
    if (dl_rec_row_impossible(&row, what, sizeof(what))) {
        snprintf(why, wlen, "result %zu (%s, %llu bytes) has %s, which no measurement gives",
                 out->nrows + 1, row.collective, (unsigned long long)row.bytes, what);
        return DL_ERR_INPUT;
    }
    return dl_rec_push_row(out, &row);
}

/* ---- the walker ---- */

/* cJSON says NULL both for bad text and for no memory: an allocator that
 * notes a failure tells them apart (installed only while reading). */
static int g_oom;
static void *note_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        g_oom = 1;
    return p;
}

typedef struct {
    const char *p, *end;
    dl_record_t *out;
    cJSON *head;         /* the document less its profiles */
    int profiles;        /* "profiles" was an array, walked */
    int bad_row;         /* a row without its collective or bytes, or impossible */
    char why[224];       /* what was wrong with it ("": no collective or bytes) */
    char obs_nccl[32];   /* what NCCL said of its version, when the fingerprint does not */
} walk_t;

static void ws(walk_t *w)
{
    while (w->p < w->end && (*w->p == ' ' || *w->p == '\t' || *w->p == '\n' || *w->p == '\r'))
        w->p++;
}

static int at(walk_t *w, char c)
{
    ws(w);
    if (w->p < w->end && *w->p == c) {
        w->p++;
        return 1;
    }
    return 0;
}

/* The end of the string whose opening quote is at p, or NULL. */
static const char *str_end(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '"')
            return p + 1;
        if (*p == '\\')
            p++;
    }
    return NULL;
}

/* The end of the value at p: strings and nesting followed; what lies
 * between is cJSON's to judge. NULL: it does not end. */
static const char *value_end(const char *p, const char *end)
{
    if (p < end && *p == '"')
        return str_end(p, end);
    if (p < end && *p != '{' && *p != '[') {
        while (p < end && !strchr(",]} \t\r\n", *p))
            p++;
        return p;
    }
    size_t depth = 0;
    for (; p < end; p++) {
        if (*p == '"') {
            if (!(p = str_end(p, end)))
                return NULL;
            p--;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if ((*p == '}' || *p == ']') && --depth == 0) {
            return p + 1;
        }
    }
    return NULL;
}

/* The value at the walker, parsed alone; the walker moves past it. */
static dl_status_t take_value(walk_t *w, cJSON **v)
{
    ws(w);
    const char *e = value_end(w->p, w->end), *stop = NULL;
    *v = e ? cJSON_ParseWithLengthOpts(w->p, (size_t)(e - w->p), &stop, 0) : NULL;
    if (*v && stop != e) {
        cJSON_Delete(*v);
        *v = NULL;
    }
    if (!*v)
        return g_oom ? DL_ERR_NOMEM : DL_ERR_INPUT;
    w->p = e;
    return DL_OK;
}

typedef dl_status_t (*member_fn)(walk_t *w, const char *key, void *arg);
typedef dl_status_t (*elem_fn)(walk_t *w, void *arg);

static dl_status_t walk_object(walk_t *w, member_fn fn, void *arg)
{
    if (!at(w, '{'))
        return DL_ERR_INPUT;
    if (at(w, '}'))
        return DL_OK;
    do {
        cJSON *key = NULL;
        ws(w);
        dl_status_t st = w->p < w->end && *w->p == '"' ? take_value(w, &key) : DL_ERR_INPUT;
        if (st == DL_OK)
            st = at(w, ':') ? fn(w, key->valuestring, arg) : DL_ERR_INPUT;
        cJSON_Delete(key);
        if (st != DL_OK)
            return st;
    } while (at(w, ','));
    return at(w, '}') ? DL_OK : DL_ERR_INPUT;
}

static dl_status_t walk_array(walk_t *w, elem_fn fn, void *arg)
{
    if (!at(w, '['))
        return DL_ERR_INPUT;
    if (at(w, ']'))
        return DL_OK;
    do {
        dl_status_t st = fn(w, arg);
        if (st != DL_OK)
            return st;
    } while (at(w, ','));
    return at(w, ']') ? DL_OK : DL_ERR_INPUT;
}

/* A member kept as cJSON in obj. */
static dl_status_t keep_member(walk_t *w, const char *key, cJSON *obj)
{
    cJSON *v;
    dl_status_t st = take_value(w, &v);
    if (st == DL_OK)
        cJSON_AddItemToObject(obj, key, v);
    return st;
}

static dl_status_t row_elem(walk_t *w, void *arg)
{
    (void)arg;
    cJSON *o;
    dl_status_t st = take_value(w, &o);
    if (st == DL_OK && !w->bad_row) {
        st = read_result(o, w->out, w->why, sizeof(w->why));
        if (st == DL_ERR_INPUT) { /* said once the whole text is known good */
            w->bad_row = 1;
            st = DL_OK;
        }
    }
    cJSON_Delete(o);
    return st;
}

static dl_status_t profile_member(walk_t *w, const char *key, void *arg)
{
    cJSON *p = arg;
    if (strcmp(key, "results") == 0 && !cJSON_GetObjectItemCaseSensitive(p, "results")) {
        ws(w);
        if (w->p < w->end && *w->p == '[') {
            cJSON_AddItemToObject(p, "results", cJSON_CreateArray()); /* its rows went to out */
            return walk_array(w, row_elem, NULL);
        }
    }
    return keep_member(w, key, p);
}

/* A profile's fields; its rows (from first) take its name. */
static dl_status_t read_profile(walk_t *w, const cJSON *p, size_t first)
{
    dl_record_t *out = w->out;
    dl_rec_profile_t *pr = dl_rec_push_profile(out, str_of(p, "name", "?"));
    if (!pr)
        return DL_ERR_NOMEM;
    pr->status = dl_rec_status_parse(str_of(p, "status", "ok"));
    snprintf(pr->reason, sizeof(pr->reason), "%s", str_of(p, "reason", ""));
    pr->modelled = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "modelled"));
    read_forced(p, pr);
    read_observed(p, pr, out);
    if (!w->obs_nccl[0])
        version_of(cJSON_GetObjectItemCaseSensitive(p, "observed_transports"), "nccl_version",
                   w->obs_nccl, sizeof(w->obs_nccl));
    for (size_t i = first; i < out->nrows; i++) {
        snprintf(out->rows[i].profile, sizeof(out->rows[i].profile), "%s", pr->name);
        out->rows[i].modelled = pr->modelled;
    }
    return read_kvs(cJSON_GetObjectItemCaseSensitive(p, "env"), &pr->env, &pr->nenv);
}

static dl_status_t profile_elem(walk_t *w, void *arg)
{
    (void)arg;
    ws(w);
    if (w->p >= w->end || *w->p != '{') { /* not an object: kept as it is, and refused */
        w->profiles = -1;
        cJSON *v;
        dl_status_t st = take_value(w, &v);
        cJSON_Delete(v);
        return st;
    }
    cJSON *p = cJSON_CreateObject();
    if (!p)
        return DL_ERR_NOMEM;
    size_t first = w->out->nrows;
    dl_status_t st = walk_object(w, profile_member, p);
    if (st == DL_OK)
        st = read_profile(w, p, first);
    cJSON_Delete(p);
    return st;
}

static dl_status_t top_member(walk_t *w, const char *key, void *arg)
{
    (void)arg;
    if (strcmp(key, "profiles") == 0 && !w->profiles &&
        !cJSON_GetObjectItemCaseSensitive(w->head, "profiles")) {
        ws(w);
        if (w->p < w->end && *w->p == '[') {
            w->profiles = 1;
            return walk_array(w, profile_elem, NULL);
        }
    }
    return keep_member(w, key, w->head);
}

/* The header, the environment and the stragglers, once the text is read. */
static dl_status_t read_head(walk_t *w)
{
    dl_record_t *out = w->out;
    dl_rec_read_header(w->head, out);
    if (!out->nccl[0])
        snprintf(out->nccl, sizeof(out->nccl), "%s", w->obs_nccl);
    for (size_t i = 0; i < out->nrows; i++)
        if (!out->rows[i].ranks)
            out->rows[i].ranks = out->ranks;
    double code = num_of(w->head, "exit_code");
    out->exit_code = code >= 0 && code < 256 ? (int)code : -1;
    dl_status_t st = read_kvs(cJSON_GetObjectItemCaseSensitive(w->head, "environment"), &out->env,
                              &out->nenv);
    return st == DL_OK ? read_stragglers(w->head, out) : st;
}

static dl_status_t walk_run(walk_t *w)
{
    dl_status_t st = walk_object(w, top_member, NULL);
    ws(w);
    if (st == DL_OK && w->p != w->end)
        st = DL_ERR_INPUT;
    if (st == DL_ERR_INPUT) {
        dl_err("%s: not valid JSON (or more than one document)", w->out->path);
        return st;
    }
    if (st == DL_OK && (num_of(w->head, "schema") != DL_RECORD_SCHEMA || w->profiles != 1)) {
        dl_err("%s: not a dlcomm run of schema %d (nor nccl-tests JSON)", w->out->path,
               DL_RECORD_SCHEMA);
        return DL_ERR_INPUT;
    }
    if (st == DL_OK && w->bad_row) {
        if (w->why[0])
            dl_err("%s: %s", w->out->path, w->why);
        else
            dl_err("%s: a result lacks its collective or bytes", w->out->path);
        return DL_ERR_INPUT;
    }
    return st == DL_OK ? read_head(w) : st;
}

dl_status_t dl_record_parse(const char *text, size_t len, dl_record_t *out)
{
    if (strlen(text) != len) {
        dl_err("%s: not valid JSON (a NUL byte inside)", out->path);
        return DL_ERR_INPUT;
    }
    walk_t w = {.p = text, .end = text + len, .out = out};
    cJSON_Hooks hooks = {note_malloc, free};
    g_oom = 0;
    cJSON_InitHooks(&hooks);
    w.head = cJSON_CreateObject();
    dl_status_t st = w.head ? walk_run(&w) : DL_ERR_NOMEM;
    if (st == DL_OK && g_oom)
        st = DL_ERR_NOMEM;
    cJSON_Delete(w.head);
    cJSON_InitHooks(NULL); /* cJSON's own again (with realloc, for printing) */
    if (st == DL_ERR_NOMEM)
        dl_err("%s: out of memory while reading it", out->path);
    if (st != DL_OK)
        dl_record_free(out);
    return st;
}

dl_status_t dl_record_read(const char *path, dl_record_t *out)
{
    char *data = NULL, file[1024];
    size_t len = 0;
    struct stat sb;
    memset(out, 0, sizeof(*out));
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) { /* a run folder: its run.json */
        snprintf(file, sizeof(file), "%s/run.json", path);
        path = file;
    }
    /* the name shown in lines: at most what the record holds */
    snprintf(out->path, sizeof(out->path), "%.*s", (int)sizeof(out->path) - 1, path);
    out->fmt = DL_FMT_DLCOMM;
    dl_status_t st = dl_read_file(path, &data, &len);
    if (st == DL_ERR_NOMEM)
        dl_err("%s: out of memory while reading it", path);
    else if (st != DL_OK)
        dl_err("%s: cannot read it (%s)", path, dl_read_error());
    if (st == DL_OK)
        st = dl_record_parse(data, len, out);
    free(data);
    return st;
}

/* The tune object of a file: a tune --json record, or run.json's "tune"
 * (of a run folder too). */
cJSON *dl_record_read_tune(const char *path, int *is_run)
{
    if (is_run)
        *is_run = 0;
    char *text = NULL, file[1100];
    size_t len = 0;
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) { /* a run folder, as dl_record_read reads it */
        snprintf(file, sizeof(file), "%s/run.json", path);
        path = file;
    }
    if (dl_read_file(path, &text, &len) != DL_OK)
        return NULL;
    /* Neither a tune record nor a run.json with one: no tree of the whole
     * file (several times its size) is built only to find that out. */
    if (!strstr(text, "\"tune\"") && !strstr(text, "\"recommendation\"")) {
        free(text);
        return NULL;
    }
    cJSON *root = cJSON_Parse(text), *t = NULL;
    free(text);
    if (!root)
        return NULL;
    if (cJSON_GetObjectItemCaseSensitive(root, "candidates") &&
        cJSON_GetObjectItemCaseSensitive(root, "recommendation"))
        return root;
    t = cJSON_DetachItemFromObjectCaseSensitive(root, "tune");
    if (t && is_run)
        *is_run = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "profiles"));
    cJSON_Delete(root);
    return t;
}
