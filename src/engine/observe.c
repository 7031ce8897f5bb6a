/* What NCCL really used, from each worker's NCCL_DEBUG_FILE, against what
 * the profile meant: a "p2p-off" profile that still ran over P2P is
 * flagged. Each rank judges its own worker's file (files live on the
 * worker's node); the verdicts travel with the per-profile agreement. */
#include "supervisor.h"

#include <string.h>

#include "../sys/sys.h"

/* The transport class dl_ncclog_contradiction expects: "P2P", "SHM", "NET",
 * "NET/IB", "NET/Socket"; NULL for none. A NET intent marked
 * "scope": "inter-node" says nothing about a one-node run. */
static const char *intended(const dl_profile_t *p, int nodes, char *buf, size_t len)
{
    const cJSON *t = cJSON_GetObjectItem(p->intent, "transport");
    const cJSON *net = cJSON_GetObjectItem(p->intent, "net");
    const cJSON *scope = cJSON_GetObjectItem(p->intent, "scope");
    if (!cJSON_IsString(t) || strcmp(t->valuestring, "any") == 0)
        return NULL;
    if (nodes < 2 && cJSON_IsString(scope) && strcmp(scope->valuestring, "inter-node") == 0)
        return NULL;
    if (strcmp(t->valuestring, "NET") == 0 && cJSON_IsString(net))
        snprintf(buf, len, "NET/%s", net->valuestring);
    else
        snprintf(buf, len, "%s", t->valuestring);
    return buf;
}

cJSON *dl_observe_transports(dl_sv_run_t *r, char *verdict, size_t len)
{
    const dl_engine_cfg_t *c = &r->e->cfg;
    char path[2048], want[64];
    verdict[0] = '\0';
    snprintf(path, sizeof(path), "%s/workers/%s.rank%d.nccl.log", c->run_dir, r->p->name, c->rank);
    cJSON *obs = dl_ncclog_parse(path);
    if (!obs)
        return NULL;
    cJSON *env = cJSON_CreateObject();
    for (int i = 0; i < r->p->nenv; i++) {
        char k[256];
        const char *eq = strchr(r->p->env[i], '=');
        snprintf(k, sizeof(k), "%.*s", (int)(eq - r->p->env[i]), r->p->env[i]);
        cJSON_AddStringToObject(env, k, eq + 1);
    }
    const char *bad = dl_ncclog_contradiction(obs, env, intended(r->p, c->nodes, want, sizeof(want)),
                                              verdict, len);
    if (!bad)
        verdict[0] = '\0';
    cJSON_Delete(env);
    return obs;
}
