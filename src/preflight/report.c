/* Check lines, the JSON entries behind them, and the verdict. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *dl_pf_status_str(dl_pf_status_t s)
{
    static const char *const names[] = {"PASS", "WARN", "FAIL", "SKIP"};
    return (unsigned)s < DL_ARRAY_SIZE(names) ? names[s] : "?";
}

static const char *lower(dl_pf_status_t s)
{
    static const char *const names[] = {"pass", "warn", "fail", "skip"};
    return (unsigned)s < DL_ARRAY_SIZE(names) ? names[s] : "?";
}

cJSON *pf_check(pf_ctx_t *c, dl_pf_status_t st, const char *check, const char *scope,
                const char *subject, cJSON *figures, const char *fmt, ...)
{
    if (c->rank != 0) {
        cJSON_Delete(figures);
        return NULL;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    printf("%s %-12s %-6s %-14s %s\n", dl_pf_status_str(st), check, scope, subject, msg);
    fflush(stdout);
    int *count[] = {&c->npass, &c->nwarn, &c->nfail, &c->nskip};
    (*count[st])++;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "check", check);
    cJSON_AddStringToObject(e, "scope", scope);
    cJSON_AddStringToObject(e, "subject", subject);
    cJSON_AddStringToObject(e, "status", lower(st));
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddItemToObject(e, "figures", figures ? figures : cJSON_CreateObject());
    cJSON_AddItemToArray(c->checks, e);
    return e;
}

static int has_string(const cJSON *arr, const char *s)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (cJSON_IsString(it) && strcmp(it->valuestring, s) == 0)
            return 1;
    }
    return 0;
}

void pf_blame_host(pf_ctx_t *c, int host)
{
    if (c->rank == 0 && host >= 0 && !has_string(c->v_hosts, c->lay.names[host]))
        cJSON_AddItemToArray(c->v_hosts, cJSON_CreateString(c->lay.names[host]));
}

void pf_blame_pair(pf_ctx_t *c, int a, int b)
{
    if (c->rank != 0)
        return;
    cJSON *p = cJSON_CreateArray();
    cJSON_AddItemToArray(p, cJSON_CreateString(c->lay.names[a]));
    cJSON_AddItemToArray(p, cJSON_CreateString(c->lay.names[b]));
    cJSON_AddItemToArray(c->v_pairs, p);
}

void pf_blame_rail(pf_ctx_t *c, int rail)
{
    if (c->rank == 0)
        cJSON_AddItemToArray(c->v_rails, cJSON_CreateNumber(rail));
}

void pf_blame_gpu(pf_ctx_t *c, const char *host, int gpu, const char *bus_id)
{
    if (c->rank != 0)
        return;
    const cJSON *it; /* several checks may fail one GPU: it is named once */
    cJSON_ArrayForEach(it, c->v_gpus)
        if (!strcmp(cJSON_GetObjectItem(it, "host")->valuestring, host) &&
            !strcmp(cJSON_GetObjectItem(it, "bus_id")->valuestring, bus_id ? bus_id : ""))
            return;
    cJSON *g = cJSON_CreateObject();
    cJSON_AddStringToObject(g, "host", host);
    cJSON_AddNumberToObject(g, "gpu", gpu);
    cJSON_AddStringToObject(g, "bus_id", bus_id ? bus_id : "");
    cJSON_AddItemToArray(c->v_gpus, g);
}

void pf_blame_rank(pf_ctx_t *c, int rank)
{
    if (c->rank != 0)
        return;
    int h = c->lay.host_of[rank];
    pf_blame_host(c, h);
    if (c->gpu_of && c->gpu_of[rank] >= 0)
        pf_blame_gpu(c, c->lay.names[h], c->gpu_of[rank], c->bus_of[rank]);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "rank", rank);
    cJSON_AddStringToObject(e, "host", c->lay.names[h]);
    if (c->gpu_of && c->gpu_of[rank] >= 0)
        cJSON_AddNumberToObject(e, "gpu", c->gpu_of[rank]);
    else
        cJSON_AddNullToObject(e, "gpu");
    cJSON_AddItemToArray(c->v_ranks, e);
}

static void append_names(char *line, size_t len, const char *label, const cJSON *arr)
{
    const cJSON *it;
    int first = 1;
    if (cJSON_GetArraySize(arr) == 0)
        return;
    size_t n = strlen(line);
    n += (size_t)snprintf(line + n, n < len ? len - n : 0, " %s=", label);
    cJSON_ArrayForEach(it, arr)
    {
        char one[300];
        if (cJSON_IsString(it))
            snprintf(one, sizeof(one), "%s", it->valuestring);
        else if (cJSON_IsNumber(it))
            snprintf(one, sizeof(one), "%d", it->valueint);
        else if (cJSON_IsArray(it))
            snprintf(one, sizeof(one), "%s-%s", cJSON_GetArrayItem(it, 0)->valuestring,
                     cJSON_GetArrayItem(it, 1)->valuestring);
        else if (cJSON_GetObjectItem(it, "rank")) /* a rank: host:rankN */
            snprintf(one, sizeof(one), "%s:rank%d", cJSON_GetObjectItem(it, "host")->valuestring,
                     cJSON_GetObjectItem(it, "rank")->valueint);
        else
            snprintf(one, sizeof(one), "%s:gpu%d",
                     cJSON_GetObjectItem(it, "host")->valuestring,
                     cJSON_GetObjectItem(it, "gpu")->valueint);
        n += (size_t)snprintf(line + n, n < len ? len - n : 0, "%s%s", first ? "" : ",", one);
        first = 0;
    }
}

/* Whether any bandwidth line judged something (PASS, WARN or FAIL): a run
 * where each was SKIP (one host, no baseline) measured, but cleared
 * nothing, and says what would. */
static int bandwidth_judged(const pf_ctx_t *c)
{
    const cJSON *e;
    int any = 0;
    cJSON_ArrayForEach(e, c->checks)
    {
        const cJSON *nm = cJSON_GetObjectItem(e, "check"), *st = cJSON_GetObjectItem(e, "status");
        if (cJSON_IsString(nm) && strcmp(nm->valuestring, "bandwidth") == 0) {
            any = 1;
            if (cJSON_IsString(st) && strcmp(st->valuestring, "skip") != 0)
                return 1;
        }
    }
    return !any;
}

#define PF_NEXT_STEP "give --baseline RUN (the run.json of a sweep on healthy hosts) or " \
                     "--system NAME (a system description to model), or run on 3 or more hosts"

dl_status_t pf_verdict(pf_ctx_t *c)
{
    if (c->rank != 0)
        return DL_OK;
    int judged = bandwidth_judged(c);
    if (!judged)
        pf_check(c, DL_PF_WARN, "bandwidth", "all", "-", NULL,
                 "no bandwidth figure was judged (every one SKIP): %s", PF_NEXT_STEP);
    dl_pf_status_t st = c->nfail ? DL_PF_FAIL : c->nwarn ? DL_PF_WARN : DL_PF_PASS;
    cJSON *v = cJSON_AddObjectToObject(c->doc, "verdict");
    cJSON_AddStringToObject(v, "status", lower(st));
    cJSON_AddItemToObject(v, "hosts", cJSON_Duplicate(c->v_hosts, 1));
    cJSON_AddItemToObject(v, "gpus", cJSON_Duplicate(c->v_gpus, 1));
    cJSON_AddItemToObject(v, "pairs", cJSON_Duplicate(c->v_pairs, 1));
    cJSON_AddItemToObject(v, "rails", cJSON_Duplicate(c->v_rails, 1));
    cJSON_AddItemToObject(v, "ranks", cJSON_Duplicate(c->v_ranks, 1));
    if (!judged)
        cJSON_AddStringToObject(v, "next_step", PF_NEXT_STEP);
    cJSON *n = cJSON_AddObjectToObject(v, "counts");
    cJSON_AddNumberToObject(n, "pass", c->npass);
    cJSON_AddNumberToObject(n, "warn", c->nwarn);
    cJSON_AddNumberToObject(n, "fail", c->nfail);
    cJSON_AddNumberToObject(n, "skip", c->nskip);
    char line[2048];
    snprintf(line, sizeof(line), "VERDICT %s %d pass, %d warn, %d fail, %d skip",
             dl_pf_status_str(st), c->npass, c->nwarn, c->nfail, c->nskip);
    append_names(line, sizeof(line), "hosts", c->v_hosts);
    append_names(line, sizeof(line), "gpus", c->v_gpus);
    append_names(line, sizeof(line), "pairs", c->v_pairs);
    append_names(line, sizeof(line), "rails", c->v_rails);
    append_names(line, sizeof(line), "ranks", c->v_ranks);
    if (!judged && st != DL_PF_FAIL)
        snprintf(line + strlen(line), sizeof(line) - strlen(line),
                 " (no bandwidth judged: --baseline RUN or --system NAME)");
    if (st == DL_PF_FAIL && !cJSON_GetArraySize(c->v_hosts) && !cJSON_GetArraySize(c->v_gpus) &&
        !cJSON_GetArraySize(c->v_pairs) && !cJSON_GetArraySize(c->v_rails))
        snprintf(line + strlen(line), sizeof(line) - strlen(line),
                 " (not localised: see the FAIL lines)");
    printf("%s\n", line);
    fflush(stdout);
    return c->nfail ? DL_ERR_CHECK : DL_OK;
}
