/* What NCCL really did, read from a worker's NCCL_DEBUG=INFO file: the
 * transports of its channels and the version it loaded. A "p2p-off" profile
 * that still ran over P2P is a lie the run must show. */
#include "sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "P2P/CUMEM/read" -> "P2P"; "NET/IB/0/GDRDMA" -> "NET/IB"; "SHM/direct/direct" -> "SHM". */
static void transport_class(const char *via, char *out, size_t len, int *gdr)
{
    size_t n = strcspn(via, " \t\n/");
    if (strncmp(via, "NET/", 4) == 0)
        n = 4 + strcspn(via + 4, " \t\n/");
    snprintf(out, len, "%.*s", (int)n, via);
    *gdr = strstr(via, "GDRDMA") != NULL;
}

static void count(cJSON *obj, const char *key)
{
    cJSON *c = cJSON_GetObjectItem(obj, key);
    if (c)
        cJSON_SetNumberValue(c, c->valuedouble + 1);
    else
        cJSON_AddNumberToObject(obj, key, 1);
}

/* Just past marker in s, or NULL. */
static const char *after(const char *s, const char *marker)
{
    const char *p = s ? strstr(s, marker) : NULL;
    return p ? p + strlen(marker) : NULL;
}

/* "NCCL INFO NCCL_P2P_DISABLE set by environment to 1" -> env["NCCL_P2P_DISABLE"] = "1":
 * the settings NCCL says it took from the environment. */
static void env_applied(cJSON *env, const char *line)
{
    static const char set_by[] = " set by environment to ";
    const char *n = after(line, "NCCL INFO "), *set = strstr(line, set_by);
    char name[64], value[128];
    if (!n || !set || set <= n || (size_t)(set - n) >= sizeof(name) || strncmp(n, "NCCL_", 5))
        return;
    snprintf(name, sizeof(name), "%.*s", (int)(set - n), n);
    if (sscanf(set + strlen(set_by), "%127s", value) != 1)
        return;
    size_t l = strlen(value);
    if (l > 1 && value[l - 1] == '.') /* some lines end in a full stop */
        value[l - 1] = '\0';
    cJSON_DeleteItemFromObject(env, name);
    cJSON_AddStringToObject(env, name, value);
}

cJSON *dl_ncclog_parse(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    cJSON *o = cJSON_CreateObject(), *tr = cJSON_AddObjectToObject(o, "transports");
    cJSON *env = cJSON_AddObjectToObject(o, "env_applied");
    char line[1024], word[64];
    int gdr_any = 0, channels = 0;
    while (fgets(line, sizeof(line), f)) {
        const char *via = after(line, " via ");
        const char *ver = after(line, "NCCL version ");
        const char *net = after(line, "NCCL INFO Using network ");
        const char *total = after(after(line, "Init timings - ncclCommInitRankConfig:"), " total ");
        double secs;
        if (strstr(line, " set by environment to ")) {
            env_applied(env, line);
        } else if (net) {
            if (sscanf(net, "%63s", word) == 1)
                cJSON_AddStringToObject(o, "network", word);
        } else if (total && sscanf(total, "%lf", &secs) == 1) {
            cJSON_AddNumberToObject(o, "init_s", secs);
        } else if (via && strstr(line, "Channel")) {
            int gdr;
            transport_class(via, word, sizeof(word), &gdr);
            count(tr, word);
            gdr_any |= gdr;
            channels++;
        } else if (ver && !cJSON_GetObjectItem(o, "nccl_version")) {
            if (sscanf(ver, "%63s", word) == 1)
                cJSON_AddStringToObject(o, "nccl_version", word);
        }
    }
    fclose(f);
    cJSON_AddNumberToObject(o, "channels", channels);
    cJSON_AddBoolToObject(o, "gdr", gdr_any);
    return o;
}

static int env_is(const cJSON *env, const char *name, const char *value)
{
    const cJSON *v = cJSON_GetObjectItem(env, name);
    return cJSON_IsString(v) && strcasecmp(v->valuestring, value) == 0;
}

static int seen(const cJSON *tr, const char *prefix)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, tr)
    {
        if (strncmp(it->string, prefix, strlen(prefix)) == 0 && it->valuedouble > 0)
            return 1;
    }
    return 0;
}

/* A setting NCCL reports taking must have the profile's value; what the
 * profile's environment forbids must be absent; the transport its intent
 * names must be present. Returns NULL when consistent (the transports are
 * not judged without channels), else a message in buf. */
const char *dl_ncclog_contradiction(const cJSON *observed, const cJSON *env, const char *intent,
                                    char *buf, size_t len)
{
    /* A setting NCCL says it took with another value than the profile's. */
    const cJSON *applied = cJSON_GetObjectItem(observed, "env_applied"), *e;
    cJSON_ArrayForEach(e, env)
    {
        const cJSON *got = cJSON_GetObjectItem(applied, e->string);
        if (cJSON_IsString(e) && cJSON_IsString(got) && strcmp(got->valuestring, e->valuestring)) {
            snprintf(buf, len, "%s=%s in the profile but NCCL took %s", e->string, e->valuestring,
                     got->valuestring);
            return buf;
        }
    }
    const cJSON *tr = cJSON_GetObjectItem(observed, "transports");
    const cJSON *ch = cJSON_GetObjectItem(observed, "channels");
    if (!tr || !cJSON_IsNumber(ch) || ch->valuedouble == 0)
        return NULL;
    static const struct {
        const char *var, *value, *transport;
    } forbids[] = {
        {"NCCL_P2P_DISABLE", "1", "P2P"},    {"NCCL_SHM_DISABLE", "1", "SHM"},
        {"NCCL_NET", "Socket", "NET/IB"},    {"NCCL_NET", "IB", "NET/Socket"},
    };
    for (size_t i = 0; i < sizeof(forbids) / sizeof(forbids[0]); i++)
        if (env_is(env, forbids[i].var, forbids[i].value) && seen(tr, forbids[i].transport)) {
            snprintf(buf, len, "%s=%s but channels ran via %s", forbids[i].var, forbids[i].value,
                     forbids[i].transport);
            return buf;
        }
    if (env_is(env, "NCCL_NET_GDR_LEVEL", "LOC") && cJSON_IsTrue(cJSON_GetObjectItem(observed, "gdr"))) {
        snprintf(buf, len, "NCCL_NET_GDR_LEVEL=LOC but channels used GPUDirect RDMA");
        return buf;
    }
    if (intent && *intent && !seen(tr, intent)) {
        snprintf(buf, len, "intended transport %s was not used by any channel", intent);
        return buf;
    }
    return NULL;
}
