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

/* The columns' widths: the longest name and intent of the profiles listed. */
typedef struct {
    int name, intent;
} widths_t;

static void print_one(const dl_profile_t *p, const widths_t *w)
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
    printf("%-*s %-*s %-11s %s\n", w->name, p->name, w->intent, intent, when, p->description);
    printf("%-*s env: %s\n", w->name, "", n ? env : "(none)");
}

static const char usage[] =
    "usage: dlcomm profiles [FILE.json...]\n\n"
    "Lists the profiles in the search path, or checks the files named, and says which\n"
    "folders it searched: $DLCOMM_PROFILES (colon-separated) first, then the source tree's\n"
    "topologies/profiles for a build tree, then the installed share/dlcomm/profiles.\n"
    "The profile default needs no file. Use them with 'dlcomm sweep -p NAME,PATH.json,...'.";

static void print_searched(void)
{
    char dirs[8][1024];
    int nd = dl_data_dirs("DLCOMM_PROFILES", "profiles", dirs, 8);
    printf("# searched:%s", nd ? "" : " (no folder found; only the built-in default)");
    for (int d = 0; d < nd; d++)
        printf(" %s", dirs[d]);
    printf("\n");
}

static int profiles_main(int argc, char **argv)
{
    char *files[64];
    int nfiles = 0;
    int code = dl_opts_command(NULL, 0, NULL, argc - 1, argv + 1, files, 64, &nfiles, usage);
    if (code >= 0)
        return code;
    dl_profile_t *ps = NULL;
    int n = 0;
    dl_status_t st = DL_OK;
    if (nfiles) {
        ps = calloc((size_t)nfiles, sizeof(*ps));
        for (int i = 0; i < nfiles && st == DL_OK; i++)
            if ((st = dl_profile_load_file(files[i], &ps[n])) == DL_OK)
                n++;
    } else {
        print_searched();
        st = dl_profiles_list_all(&ps, &n);
    }
    widths_t w = {12, 32}; /* at least these: the columns do not move for a short list */
    for (int i = 0; i < n; i++) {
        char intent[256];
        intent_text(ps[i].intent, intent, sizeof(intent));
        int ln = (int)strlen(ps[i].name), li = (int)strlen(intent);
        w.name = ln > w.name ? ln : w.name;
        w.intent = li > w.intent ? li : w.intent;
    }
    printf("%-*s %-*s %-11s %s\n", w.name, "# name", w.intent, "intent", "applies", "description");
    for (int i = 0; i < n; i++)
        print_one(&ps[i], &w);
    dl_profiles_free(ps, n);
    return dl_status_exit_code(st);
}

int cmd_profiles(int argc, char **argv)
{
    return dl_stdio_run(profiles_main, argc, argv, 0);
}
