/* Profiles: named sets of NCCL settings, one JSON file each. A malformed
 * file stops the run before anything starts (exit 2, naming the file). */
#include "engine.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static const char *const known_keys[] = {"name", "description", "env", "intent", "applies_when"};
static const char *const known_when[] = {"min_nodes", "max_nodes"};

static int in_list(const char *s, const char *const *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, l[i]) == 0)
            return 1;
    return 0;
}

static dl_status_t bad(const char *path, const char *what, const char *detail)
{
    dl_err("profile %s: %s%s%s", path, what, detail ? " " : "", detail ? detail : "");
    return DL_ERR_INPUT;
}

/* A variable name the shell and NCCL would both take: [A-Za-z_][A-Za-z0-9_]*. */
static int env_name_ok(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

/* The kernel's limit on one NAME=value string of a new process
 * (MAX_ARG_STRLEN, 32 pages): checked here so the run never starts. */
#define DL_ENV_STR_MAX (32 * 4096)

/* NVLink multicast stays off on shared hosts: a profile may only repeat
 * that, never turn it on, neither directly nor through the file NCCL reads
 * its settings from (NCCL_CONF_FILE: NAME=value lines). */
static dl_status_t nvls_check(const char *path, const char *name, const char *value)
{
    if (strcmp(name, "NCCL_NVLS_ENABLE") == 0 && strcmp(value, "0") != 0)
        return bad(path, "NCCL_NVLS_ENABLE may only be \"0\" in a profile", NULL);
    if (strcmp(name, "NCCL_CONF_FILE") != 0)
        return DL_OK;
    char *text = NULL;
    if (dl_read_file(value, &text, NULL) != DL_OK)
        return bad(path, "NCCL_CONF_FILE cannot be read:", dl_read_error());
    dl_status_t st = DL_OK;
    for (char *line = text, *next; line && st == DL_OK; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        char *k = line, *v = eq + 1, *e;
        while (*k == ' ' || *k == '\t')
            k++;
        for (e = eq; e > k && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); e--)
            e[-1] = '\0';
        while (*v == ' ' || *v == '\t')
            v++;
        for (e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); e--)
            e[-1] = '\0';
        if (strcmp(k, "NCCL_NVLS_ENABLE") == 0 && strcmp(v, "0") != 0)
            st = bad(path, "NCCL_CONF_FILE sets NCCL_NVLS_ENABLE; a profile may only turn it off:",
                     value);
    }
    free(text);
    return st;
}

static dl_status_t load_env(const char *path, const cJSON *env, dl_profile_t *p)
{
    if (!cJSON_IsObject(env))
        return bad(path, "\"env\" must be an object of NAME: \"value\"", NULL);
    p->env = calloc((size_t)cJSON_GetArraySize(env) + 1, sizeof(char *));
    const cJSON *v;
    cJSON_ArrayForEach(v, env)
    {
        if (!cJSON_IsString(v))
            return bad(path, "env value is not a string:", v->string);
        if (!env_name_ok(v->string))
            return bad(path, "env name is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", NULL);
        size_t len = strlen(v->string) + strlen(v->valuestring) + 2;
        if (len > DL_ENV_STR_MAX) {
            char lim[96];
            snprintf(lim, sizeof(lim), "%s is %zu bytes; a process takes at most %d", v->string,
                     len, DL_ENV_STR_MAX);
            return bad(path, "env value too long:", lim);
        }
        dl_status_t nst = nvls_check(path, v->string, v->valuestring);
        if (nst != DL_OK)
            return nst;
        char *kv = malloc(len);
        snprintf(kv, len, "%s=%s", v->string, v->valuestring);
        p->env[p->nenv++] = kv;
    }
    return DL_OK;
}

static dl_status_t load_when(const char *path, const cJSON *w, dl_profile_t *p)
{
    if (!w)
        return DL_OK;
    if (!cJSON_IsObject(w))
        return bad(path, "\"applies_when\" must be an object", NULL);
    const cJSON *v;
    cJSON_ArrayForEach(v, w)
    {
        if (!in_list(v->string, known_when, DL_ARRAY_SIZE(known_when)))
            return bad(path, "unknown key in applies_when:", v->string);
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1 && v->valuedouble <= 1e6) ||
            v->valuedouble != (int)v->valuedouble)
            return bad(path, "applies_when value must be a whole number >= 1:", v->string);
    }
    const cJSON *mn = cJSON_GetObjectItem(w, "min_nodes"), *mx = cJSON_GetObjectItem(w, "max_nodes");
    p->min_nodes = mn ? mn->valueint : 0;
    p->max_nodes = mx ? mx->valueint : 0;
    if (mn && mx && p->min_nodes > p->max_nodes)
        return bad(path, "applies_when min_nodes is larger than max_nodes: it would never run",
                   NULL);
    return DL_OK;
}

static dl_status_t load_tree(const char *path, const cJSON *j, dl_profile_t *p)
{
    if (!cJSON_IsObject(j))
        return bad(path, "not a JSON object", NULL);
    const cJSON *v;
    cJSON_ArrayForEach(v, j)
        if (!in_list(v->string, known_keys, DL_ARRAY_SIZE(known_keys)))
            return bad(path, "unknown key", v->string);
    const cJSON *name = cJSON_GetObjectItem(j, "name"), *desc = cJSON_GetObjectItem(j, "description");
    const cJSON *env = cJSON_GetObjectItem(j, "env"), *intent = cJSON_GetObjectItem(j, "intent");
    if (!cJSON_IsString(name) || !*name->valuestring)
        return bad(path, "missing \"name\" (a non-empty string)", NULL);
    int ctrl = 0;
    for (const unsigned char *c = (const unsigned char *)name->valuestring; *c; c++)
        ctrl |= *c < 0x20 || *c == 0x7f;
    if (strlen(name->valuestring) >= sizeof(p->name) || strpbrk(name->valuestring, "/ :,") || ctrl ||
        !dl_utf8_valid(name->valuestring))
        return bad(path, "\"name\" must be short UTF-8 text, without '/', ':', ',', spaces or "
                   "control characters", NULL);
    if (!env)
        return bad(path, "missing \"env\" (an object, may be empty)", NULL);
    if (desc && !cJSON_IsString(desc))
        return bad(path, "\"description\" must be a string", NULL);
    if (intent && !cJSON_IsObject(intent))
        return bad(path, "\"intent\" must be an object", NULL);
    snprintf(p->name, sizeof(p->name), "%s", name->valuestring);
    snprintf(p->description, sizeof(p->description), "%s", desc ? desc->valuestring : "");
    p->intent = intent ? cJSON_Duplicate(intent, 1) : cJSON_CreateObject();
    dl_status_t st = load_env(path, env, p);
    if (st == DL_OK)
        st = load_when(path, cJSON_GetObjectItem(j, "applies_when"), p);
    return st;
}

static void profile_clear(dl_profile_t *p)
{
    for (int i = 0; i < p->nenv; i++)
        free(p->env[i]);
    free(p->env);
    cJSON_Delete(p->intent);
    memset(p, 0, sizeof(*p));
}

/* The profile `default` needs no file: when the search path has none, this
 * one (the same as topologies/profiles/default.json) stands in. */
static const char builtin_default[] =
    "{\"name\": \"default\", \"description\": \"NCCL's own choices: every transport allowed, "
    "algorithm and protocol tuned by NCCL\", \"env\": {}, \"intent\": {\"transport\": \"any\"}}";
#define BUILTIN_PATH "(built in)"

static dl_status_t load_text(const char *path, const char *text, size_t len, dl_profile_t *p)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->path, sizeof(p->path), "%s", path);
    cJSON *j = dl_json_parse_whole(text, len);
    dl_status_t st;
    if (!j) {
        const char *where = cJSON_GetErrorPtr();
        char near[48] = "";
        if (where && where >= text && where <= text + len)
            snprintf(near, sizeof(near), "(near byte %ld)", (long)(where - text));
        st = bad(path, "is not valid JSON", near[0] ? near : NULL);
    } else {
        st = load_tree(path, j, p);
    }
    cJSON_Delete(j);
    if (st != DL_OK)
        profile_clear(p);
    return st;
}

dl_status_t dl_profile_load_file(const char *path, dl_profile_t *p)
{
    char *text = NULL;
    size_t len = 0;
    if (dl_read_file(path, &text, &len) != DL_OK) {
        memset(p, 0, sizeof(*p));
        return bad(path, "cannot be read:", dl_read_error());
    }
    dl_status_t st = load_text(path, text, len, p);
    free(text);
    return st;
}

static dl_status_t load_builtin_default(dl_profile_t *p)
{
    return load_text(BUILTIN_PATH, builtin_default, sizeof(builtin_default) - 1, p);
}

void dl_profiles_free(dl_profile_t *p, int n)
{
    for (int i = 0; p && i < n; i++)
        profile_clear(&p[i]);
    free(p);
}

/* " (did you mean 'x'?)" for a profile name that is none: the search
 * path's names and the built-in default. */
static void profile_suggest(const char *word, char *buf, size_t len)
{
    char names[128][64];
    const char *ptrs[129] = {"default"};
    int n = dl_data_names("DLCOMM_PROFILES", "profiles", names, 128);
    for (int i = 0; i < n; i++)
        ptrs[i + 1] = names[i];
    dl_suggest_append(buf, len, word, ptrs, (size_t)n + 1);
}

dl_status_t dl_profiles_load(const char *list, dl_profile_t **out, int *n)
{
    char *buf = strdup(list); /* any length: a list is never cut */
    if (!buf)
        return DL_ERR_NOMEM;
    int cap = 1;
    for (const char *c = buf; *c; c++)
        cap += *c == ',';
    dl_profile_t *ps = calloc((size_t)cap, sizeof(*ps));
    int k = 0;
    dl_status_t st = DL_OK;
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w && st == DL_OK; w = strtok_r(NULL, ",", &save)) {
        char path[1024];
        dl_status_t fst = dl_data_find("DLCOMM_PROFILES", "profiles", w, path, sizeof(path));
        if (fst == DL_ERR_USAGE) {
            dl_err("profile '%.60s...': a name of %zu bytes; at most %zu", w, strlen(w),
                   sizeof(path) - 1);
            st = DL_ERR_USAGE;
            break;
        }
        int found = fst == DL_OK;
        if (!found && strcmp(w, "default") == 0) {
            snprintf(path, sizeof(path), "%s", BUILTIN_PATH);
        } else if (!found) {
            char mean[128] = "";
            if (!strchr(w, '/'))
                profile_suggest(w, mean, sizeof(mean));
            dl_err("profile '%s': no such file%s%s (see dlcomm profiles)", w,
                   strchr(w, '/') ? "" : " in the profile search path", mean);
            st = DL_ERR_INPUT;
            break;
        }
        st = strcmp(path, BUILTIN_PATH) == 0 ? load_builtin_default(&ps[k])
                                             : dl_profile_load_file(path, &ps[k]);
        if (st != DL_OK)
            break;
        for (int i = 0; i < k; i++)
            if (strcmp(ps[i].name, ps[k].name) == 0) {
                dl_err("profile '%s' is listed twice (%s)", ps[k].name, path);
                st = DL_ERR_USAGE;
            }
        k++;
    }
    free(buf);
    if (st == DL_OK && k == 0) {
        dl_err("-p: no profile named");
        st = DL_ERR_USAGE;
    }
    if (st != DL_OK) {
        dl_profiles_free(ps, k);
        return st;
    }
    *out = ps;
    *n = k;
    return DL_OK;
}

const char *dl_profile_skip_reason(const dl_profile_t *p, int nodes, char *buf, size_t len)
{
    if (p->min_nodes && nodes < p->min_nodes)
        snprintf(buf, len, "applies_when min_nodes %d: this run has %d node%s", p->min_nodes,
                 nodes, nodes == 1 ? "" : "s");
    else if (p->max_nodes && nodes > p->max_nodes)
        snprintf(buf, len, "applies_when max_nodes %d: this run has %d nodes", p->max_nodes, nodes);
    else
        return NULL;
    return buf;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const dl_profile_t *)a)->name, ((const dl_profile_t *)b)->name);
}

dl_status_t dl_profiles_list_all(dl_profile_t **out, int *n)
{
    char dirs[8][1024];
    int nd = dl_data_dirs("DLCOMM_PROFILES", "profiles", dirs, 8), k = 0, cap = 16;
    dl_profile_t *ps = calloc((size_t)cap, sizeof(*ps));
    dl_status_t st = DL_OK;
    for (int d = 0; d < nd; d++) {
        DIR *dh = opendir(dirs[d]);
        struct dirent *de;
        while (dh && (de = readdir(dh))) {
            size_t l = strlen(de->d_name);
            if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0)
                continue;
            if (k == cap)
                ps = realloc(ps, (size_t)(cap *= 2) * sizeof(*ps));
            char path[1024];
            if (snprintf(path, sizeof(path), "%.700s/%.300s", dirs[d], de->d_name) >= (int)sizeof(path))
                continue;
            if (dl_profile_load_file(path, &ps[k]) != DL_OK) {
                st = DL_ERR_INPUT;
                continue;
            }
            int dup = 0;
            for (int i = 0; i < k; i++)
                dup |= strcmp(ps[i].name, ps[k].name) == 0;
            if (dup)
                profile_clear(&ps[k]);
            else
                k++;
        }
        if (dh)
            closedir(dh);
    }
    int have_default = 0;
    for (int i = 0; i < k; i++)
        have_default |= strcmp(ps[i].name, "default") == 0;
    if (!have_default) {
        if (k == cap)
            ps = realloc(ps, (size_t)(cap *= 2) * sizeof(*ps));
        if (load_builtin_default(&ps[k]) == DL_OK)
            k++;
    }
    qsort(ps, (size_t)k, sizeof(*ps), by_name);
    *out = ps;
    *n = k;
    return st;
}
