/* Reader of dlcomm run.json (schema 1; see docs/results.md). */
#include "analysis.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static dl_status_t read_stragglers(const cJSON *run, dl_run_t *out)
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
static void read_where(const cJSON *run, const cJSON *fp, dl_run_t *out)
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

void dl_an_read_header(const cJSON *run, dl_run_t *out)
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
static void read_forced(const cJSON *p, dl_prof_t *pr)
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
static void read_observed(const cJSON *p, dl_prof_t *pr, dl_run_t *out)
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

static dl_status_t read_result(const cJSON *o, const dl_prof_t *pr, dl_run_t *out)
{
    dl_row_t row;
    dl_an_row_init(&row);
    double bytes = num_of(o, "bytes"), ranks = num_of(o, "ranks");
    const char *coll = str_of(o, "collective", NULL);
    if (!coll || !(bytes >= 0 && bytes < 1.8e19))
        return DL_ERR_INPUT;
    snprintf(row.profile, sizeof(row.profile), "%s", pr->name);
    snprintf(row.collective, sizeof(row.collective), "%s", coll);
    snprintf(row.dtype, sizeof(row.dtype), "%s", str_of(o, "dtype", "?"));
    snprintf(row.op, sizeof(row.op), "%s", str_of(o, "op", "none"));
    snprintf(row.placement, sizeof(row.placement), "%s", str_of(o, "placement", "out"));
    row.bytes = (uint64_t)bytes;
    double asked = num_of(o, "bytes_requested");
    row.asked = asked >= 0 && asked < 1.8e19 ? (uint64_t)asked : 0;
    row.ranks = ranks >= 1 && ranks < 1e7 ? (int)ranks : out->ranks;
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
    row.modelled = pr->modelled;
    double g = num_of(o, "group");
    row.group = g >= 0 && g < 1e7 ? (int)g : -1;
    return dl_an_add_row(out, &row);
}

dl_status_t dl_an_read_dlcomm(const char *buf, dl_run_t *out)
{
    cJSON *run = dl_json_parse_whole(buf, strlen(buf));
    if (!run || !cJSON_IsObject(run)) {
        cJSON_Delete(run);
        dl_err("%s: not valid JSON (or more than one document)", out->path);
        return DL_ERR_INPUT;
    }
    double schema = num_of(run, "schema");
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(run, "profiles");
    if (schema != 1 || !cJSON_IsArray(profiles)) {
        dl_err("%s: not a dlcomm run of schema 1 (nor nccl-tests JSON)", out->path);
        cJSON_Delete(run);
        return DL_ERR_INPUT;
    }
    dl_an_read_header(run, out);
    dl_status_t st = read_kvs(cJSON_GetObjectItemCaseSensitive(run, "environment"), &out->env,
                              &out->nenv);
    if (st == DL_OK)
        st = read_stragglers(run, out);
    const cJSON *p;
    cJSON_ArrayForEach(p, profiles)
    {
        if (st != DL_OK)
            break;
        dl_prof_t *pr = dl_an_add_prof(out, str_of(p, "name", "?"));
        if (!pr) {
            st = DL_ERR_NOMEM;
            break;
        }
        snprintf(pr->status, sizeof(pr->status), "%s", str_of(p, "status", "ok"));
        snprintf(pr->reason, sizeof(pr->reason), "%s", str_of(p, "reason", ""));
        pr->modelled = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "modelled"));
        read_forced(p, pr);
        read_observed(p, pr, out);
        if ((st = read_kvs(cJSON_GetObjectItemCaseSensitive(p, "env"), &pr->env, &pr->nenv)) != DL_OK)
            break;
        if (!out->nccl[0]) /* what NCCL itself said, when the fingerprint does not */
            version_of(cJSON_GetObjectItemCaseSensitive(p, "observed_transports"), "nccl_version",
                       out->nccl, sizeof(out->nccl));
        const cJSON *o;
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(p, "results"))
        {
            if ((st = read_result(o, pr, out)) != DL_OK)
                break;
        }
        if (st != DL_OK)
            break;
    }
    cJSON_Delete(run);
    if (st == DL_ERR_INPUT)
        dl_err("%s: a result lacks its collective or bytes", out->path);
    return st;
}
