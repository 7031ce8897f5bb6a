/* The verdict as Prometheus gauges (preflight --prometheus), read from the
 * finished JSON document, so the file says exactly what the JSON says:
 *   dlcomm_preflight_ok{host}                 1, or 0 for a host at fault
 *   dlcomm_preflight_checks_failed{host,check} FAIL lines concerning the host
 *   dlcomm_preflight_exit_code, dlcomm_preflight_timestamp_seconds,
 *   dlcomm_preflight_elapsed_seconds
 * A run that broke has no per-host samples: it judged no host. */
#include "internal.h"

#include <string.h>
#include <time.h>

/* The hosts of the run, in rank order (scopes.world.host_ranks). */
static const cJSON *run_hosts(const cJSON *doc)
{
    const cJSON *w = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "scopes"), "world");
    return cJSON_GetObjectItem(w, "host_ranks");
}

static const char *host_name(const cJSON *e)
{
    const cJSON *h = cJSON_GetObjectItem(e, "host");
    return cJSON_IsString(h) ? h->valuestring : NULL;
}

static int in_list(const cJSON *arr, const char *host)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (cJSON_IsString(it) && strcmp(it->valuestring, host) == 0)
            return 1;
        if (cJSON_IsArray(it) && in_list(it, host)) /* a pair */
            return 1;
        if (cJSON_IsObject(it) && host_name(it) && strcmp(host_name(it), host) == 0) /* a GPU */
            return 1;
    }
    return 0;
}

/* Whether the verdict puts host at fault: named itself, by one of its GPUs
 * or in a pair; a failure localised to nothing (a world check, a rail)
 * fails every host, since none can be cleared. */
static int host_failed(const cJSON *v, const char *host)
{
    static const char *const named[] = {"hosts", "gpus", "pairs"};
    int any = 0;
    for (size_t i = 0; i < DL_ARRAY_SIZE(named); i++) {
        const cJSON *arr = cJSON_GetObjectItem(v, named[i]);
        any += cJSON_GetArraySize(arr);
        if (in_list(arr, host))
            return 1;
    }
    const cJSON *st = cJSON_GetObjectItem(v, "status");
    return !any && cJSON_IsString(st) && strcmp(st->valuestring, "fail") == 0;
}

/* Whether a check line concerns host: its subject is the host ("h",
 * "h rank3", "h gpu0", "h rank3 gpu0") or a pair of hosts ("a-b"); a world
 * correctness line concerns the hosts of its ranks with wrong elements.
 * Other world lines and rails concern no one host. */
static int check_on(const cJSON *c, const char *host)
{
    const cJSON *sc = cJSON_GetObjectItem(c, "scope"), *sj = cJSON_GetObjectItem(c, "subject");
    if (!cJSON_IsString(sc) || !cJSON_IsString(sj))
        return 0;
    const char *s = sj->valuestring;
    size_t n = strlen(host);
    if (strcmp(sc->valuestring, "world") == 0)
        return in_list(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "figures"), "wrong_per_rank"),
                       host);
    if (strcmp(sc->valuestring, "rail") == 0)
        return 0;
    if (strncmp(s, host, n) == 0 && (s[n] == '\0' || s[n] == ' '))
        return 1;
    if (strcmp(sc->valuestring, "pair") != 0)
        return 0;
    const char *dash = strstr(s, host); /* "a-b": host as either side */
    for (; dash; dash = strstr(dash + 1, host))
        if ((dash == s && dash[n] == '-') || (dash > s && dash[-1] == '-' && dash[n] == '\0'))
            return 1;
    return 0;
}

static int localised(const cJSON *c, const cJSON *hosts)
{
    const cJSON *h;
    cJSON_ArrayForEach(h, hosts)
    {
        if (host_name(h) && check_on(c, host_name(h)))
            return 1;
    }
    return 0;
}

static int is_fail(const cJSON *c)
{
    const cJSON *st = cJSON_GetObjectItem(c, "status");
    return cJSON_IsString(st) && strcmp(st->valuestring, "fail") == 0;
}

/* FAIL lines of one check name on host (NULL: those on no host). */
static int failed(const cJSON *checks, const cJSON *hosts, const char *check, const char *host)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, checks)
    {
        const cJSON *nm = cJSON_GetObjectItem(c, "check");
        if (!is_fail(c) || !cJSON_IsString(nm) || strcmp(nm->valuestring, check) != 0)
            continue;
        n += host ? check_on(c, host) : !localised(c, hosts);
    }
    return n;
}

/* Each check name once, in the order the checks ran. */
static int first_of_name(const cJSON *checks, const cJSON *c, const char *nm)
{
    for (const cJSON *e = checks->child; e && e != c; e = e->next) {
        const cJSON *en = cJSON_GetObjectItem(e, "check");
        if (cJSON_IsString(en) && strcmp(en->valuestring, nm) == 0)
            return 0;
    }
    return 1;
}

static void per_check(dl_prom_t *p, const cJSON *doc, const cJSON *hosts)
{
    const cJSON *checks = cJSON_GetObjectItem(doc, "checks"), *c, *h;
    dl_prom_gauge(p, "dlcomm_preflight_checks_failed",
                  "FAIL lines of the last preflight by check and host (no host label: a "
                  "failure localised to no one host)");
    cJSON_ArrayForEach(c, checks)
    {
        const cJSON *nm = cJSON_GetObjectItem(c, "check");
        if (!cJSON_IsString(nm) || !first_of_name(checks, c, nm->valuestring))
            continue;
        cJSON_ArrayForEach(h, hosts)
        {
            if (host_name(h))
                dl_prom_sample(p, "dlcomm_preflight_checks_failed",
                               failed(checks, hosts, nm->valuestring, host_name(h)), "host",
                               host_name(h), "check", nm->valuestring, NULL);
        }
        int none = failed(checks, hosts, nm->valuestring, NULL);
        if (none)
            dl_prom_sample(p, "dlcomm_preflight_checks_failed", none, "check", nm->valuestring,
                           NULL);
    }
}

static double number(const cJSON *doc, const char *key, double dflt)
{
    const cJSON *n = cJSON_GetObjectItem(doc, key);
    return cJSON_IsNumber(n) ? n->valuedouble : dflt;
}

dl_status_t dl_pf_prometheus(const char *path, const cJSON *doc)
{
    dl_prom_t *p = dl_prom_new();
    const cJSON *v = cJSON_GetObjectItem(doc, "verdict"), *hosts = run_hosts(doc), *h;
    const cJSON *st = cJSON_GetObjectItem(v, "status");
    int broke = !cJSON_IsString(st) || strcmp(st->valuestring, "broke") == 0;
    dl_prom_gauge(p, "dlcomm_preflight_timestamp_seconds",
                  "When the last preflight ended, seconds since the epoch");
    dl_prom_sample(p, "dlcomm_preflight_timestamp_seconds", (double)time(NULL), NULL);
    dl_prom_gauge(p, "dlcomm_preflight_exit_code",
                  "Exit code of the last preflight: 0 pass, 1 a check failed, 3 it broke");
    dl_prom_sample(p, "dlcomm_preflight_exit_code", number(doc, "exit_code", 3), NULL);
    if (cJSON_IsNumber(cJSON_GetObjectItem(doc, "elapsed_s"))) {
        dl_prom_gauge(p, "dlcomm_preflight_elapsed_seconds", "How long the last preflight took");
        dl_prom_sample(p, "dlcomm_preflight_elapsed_seconds", number(doc, "elapsed_s", 0), NULL);
    }
    if (!broke) {
        dl_prom_gauge(p, "dlcomm_preflight_ok",
                      "1 when the last preflight cleared the host, 0 when its verdict put the "
                      "host at fault (or failed without naming any host)");
        cJSON_ArrayForEach(h, hosts)
        {
            if (host_name(h))
                dl_prom_sample(p, "dlcomm_preflight_ok", !host_failed(v, host_name(h)), "host",
                               host_name(h), NULL);
        }
        per_check(p, doc, hosts);
    }
    return dl_prom_write(p, path);
}
