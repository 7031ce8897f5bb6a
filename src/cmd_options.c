/* dlcomm __options (hidden): every command's option table as JSON, so a
 * test can enumerate the options and feed each bad values; a row added to a
 * table is covered the day it is added. Each command file exports its table
 * with DL_OPTS_EXPORT; sweep's (DL_OPTS_EXPORT_PLUGINS) includes every
 * backend's rows. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "commands.h"
#include "util/util.h"

static const char *const kinds[] = {"flag", "str", "int", "double", "size", "enum", "list"};

static void add_rows(cJSON *arr, const dl_opt_t *opts, size_t n, const char *owner)
{
    for (size_t i = 0; i < n; i++) {
        const dl_opt_t *o = &opts[i];
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "name", o->longname);
        if (o->shortname) {
            char s[2] = {o->shortname, 0};
            cJSON_AddStringToObject(r, "short", s);
        }
        cJSON_AddStringToObject(r, "kind", kinds[o->kind]);
        if (o->def)
            cJSON_AddStringToObject(r, "default", o->def);
        if (o->kind == DL_OPT_INT) {
            long lo, hi;
            dl_opt_range(o, &lo, &hi);
            cJSON_AddNumberToObject(r, "min", (double)lo);
            cJSON_AddNumberToObject(r, "max", (double)hi);
        }
        if (o->choices) {
            cJSON *c = cJSON_AddArrayToObject(r, "choices");
            for (int k = 0; k < o->choices->n; k++)
                cJSON_AddItemToArray(c, cJSON_CreateString(o->choices->names[k]));
        }
        if (owner)
            cJSON_AddStringToObject(r, "backend", owner);
        cJSON_AddItemToArray(arr, r);
    }
}

int cmd_options(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        dl_err("__options takes no arguments");
        return 2;
    }
    cJSON *j = cJSON_CreateObject();
    const dl_opt_table_t *t;
    for (size_t i = 0; (t = dl_opt_table_at(i)); i++) {
        cJSON *arr = cJSON_AddArrayToObject(j, t->cmd);
        add_rows(arr, t->opts, t->n, NULL);
        for (size_t k = 0; t->plugins && k < dl_backend_count; k++)
            add_rows(arr, dl_backends[k]->opts, dl_backends[k]->nopts, dl_backends[k]->name);
    }
    char *s = cJSON_Print(j);
    puts(s ? s : "{}");
    free(s);
    cJSON_Delete(j);
    return 0;
}
