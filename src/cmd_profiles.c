/* dlcomm profiles: every profile the search path holds, with what it means
 * to exercise and when it applies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "engine/engine.h"

static void intent_text(const cJSON *intent, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    const cJSON *v;
    cJSON_ArrayForEach(v, intent)
    {
        if (cJSON_IsString(v) && n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "", v->string,
                                  v->valuestring);
    }
    if (!buf[0])
        snprintf(buf, len, "-");
}

static void print_one(const dl_profile_t *p)
{
    char intent[256], when[64] = "always", env[512] = "";
    intent_text(p->intent, intent, sizeof(intent));
    if (p->min_nodes && p->max_nodes)
        snprintf(when, sizeof(when), "%d..%d nodes", p->min_nodes, p->max_nodes);
    else if (p->min_nodes)
        snprintf(when, sizeof(when), ">= %d nodes", p->min_nodes);
    else if (p->max_nodes)
        snprintf(when, sizeof(when), "<= %d nodes", p->max_nodes);
    size_t n = 0;
    for (int i = 0; i < p->nenv && n < sizeof(env); i++)
        n += (size_t)snprintf(env + n, sizeof(env) - n, "%s%s", i ? " " : "", p->env[i]);
    printf("%-12s %-32s %-11s %s\n", p->name, intent, when, p->description);
    printf("%-12s env: %s\n", "", n ? env : "(none)");
}

int cmd_profiles(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: dlcomm profiles [FILE.json...]\n\n"
               "Lists the profiles in the search path ($DLCOMM_PROFILES, then topologies/profiles\n"
               "beside the executable), or checks the files named. Use them with\n"
               "'dlcomm sweep -p NAME,PATH.json,...'.\n");
        return 0;
    }
    dl_profile_t *ps = NULL;
    int n = 0;
    dl_status_t st = DL_OK;
    if (argc > 1) {
        ps = calloc((size_t)argc, sizeof(*ps));
        for (int i = 1; i < argc && st == DL_OK; i++)
            if ((st = dl_profile_load_file(argv[i], &ps[n])) == DL_OK)
                n++;
    } else {
        st = dl_profiles_list_all(&ps, &n);
    }
    printf("%-12s %-32s %-11s %s\n", "# name", "intent", "applies", "description");
    for (int i = 0; i < n; i++)
        print_one(&ps[i]);
    dl_profiles_free(ps, n);
    return dl_status_exit_code(st);
}
