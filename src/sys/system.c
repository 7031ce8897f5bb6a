/* The one reader of system descriptions (system.h). */
#include "system.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

const char *const dl_path_names[DL_PATH_COUNT] = {"nvlink", "pcie", "shm", "ib", "socket"};

static dl_status_t bad(const char *path, const char *what, const char *name)
{
    dl_err("system %s: %s%s%s", path, what, name ? " " : "", name ? name : "");
    return DL_ERR_INPUT;
}

/* A number of at least min; def < 0: the key is required. */
static dl_status_t num(const char *path, const cJSON *o, const char *key, double min, double def,
                       double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (def < 0)
            return bad(path, "missing", key);
        *out = def;
        return DL_OK;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < min)
        return bad(path, "must be a number of at least the minimum:", key);
    *out = v->valuedouble;
    return DL_OK;
}

/* A count (GPUs, nodes, NICs): a whole number in [min, max], so that it
 * and the ranks made of it fit an int (2^63 nodes was SIGFPE). */
static dl_status_t count(const char *path, const cJSON *o, const char *key, double min, double max,
                         double def, int *out)
{
    double v = 0;
    dl_status_t st = num(path, o, key, min, def, &v);
    if (st == DL_OK && (v > max || v != (double)(long long)v)) {
        char what[96];
        snprintf(what, sizeof(what), "must be a whole number from %.0f to %.0f:", min, max);
        return bad(path, what, key);
    }
    *out = (int)v;
    return st;
}

static dl_status_t only_keys(const char *file, const cJSON *o, const char *const *keys, size_t n,
                             const char *what)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, o)
    {
        size_t k;
        for (k = 0; k < n && strcmp(v->string, keys[k]); k++)
            ;
        if (k == n)
            return bad(file, what, v->string);
    }
    return DL_OK;
}

static dl_status_t parse_path(const char *file, const cJSON *p, int k, dl_path_t *out)
{
    static const char *const keys[] = {"bw_gbyte_s", "lat_us", "efficiency"};
    if (!cJSON_IsObject(p)) /* an array's items have no names to check */
        return bad(file, "a path must be an object:", p->string);
    dl_status_t st = only_keys(file, p, keys, 3, "unknown key in a path:");
    double bw = 0, lat = 0, eff = 1;
    if (st == DL_OK)
        st = num(file, p, "bw_gbyte_s", 0, k == DL_PATH_IB ? 0 : -1, &bw);
    if (st == DL_OK)
        st = num(file, p, "lat_us", 0, -1, &lat);
    if (st == DL_OK)
        st = num(file, p, "efficiency", 0.01, 1.0, &eff);
    *out = (dl_path_t){bw, lat, eff > 1 ? 1 : eff};
    return st;
}

static dl_status_t parse_paths(const char *file, const cJSON *ps, dl_system_t *s)
{
    if (!cJSON_IsObject(ps))
        return bad(file, "\"paths\" must be an object", NULL);
    const cJSON *p;
    cJSON_ArrayForEach(p, ps)
    {
        int k;
        for (k = 0; k < DL_PATH_COUNT && strcmp(p->string, dl_path_names[k]); k++)
            ;
        if (k == DL_PATH_COUNT)
            return bad(file, "unknown path (nvlink, pcie, shm, ib, socket):", p->string);
        dl_status_t st = parse_path(file, p, k, &s->path[k]);
        if (st != DL_OK)
            return st;
    }
    if (s->path[DL_PATH_SHM].bw <= 0 || s->path[DL_PATH_SOCKET].bw <= 0)
        return bad(file, "\"paths\" needs at least shm and socket", NULL);
    if (s->nics > 0 && s->path[DL_PATH_IB].lat <= 0)
        return bad(file, "NICs need a \"paths\".ib entry (lat_us, efficiency)", NULL);
    return DL_OK;
}

/* "gpu": figures preflight's copy checks judge by; each optional, each a
 * positive number. */
static dl_status_t parse_gpu(const char *file, const cJSON *g, dl_system_t *s)
{
    static const char *const keys[] = {"memory_gbyte_s", "host_link_gbyte_s"};
    s->gpu_memory_gbyte_s = s->gpu_host_link_gbyte_s = -1;
    if (!g)
        return DL_OK;
    if (!cJSON_IsObject(g))
        return bad(file, "\"gpu\" must be an object", NULL);
    dl_status_t st = only_keys(file, g, keys, 2,
                               "unknown key in \"gpu\" (memory_gbyte_s, host_link_gbyte_s):");
    if (st == DL_OK && cJSON_GetObjectItemCaseSensitive(g, keys[0]))
        st = num(file, g, keys[0], 0.001, -1, &s->gpu_memory_gbyte_s);
    if (st == DL_OK && cJSON_GetObjectItemCaseSensitive(g, keys[1]))
        st = num(file, g, keys[1], 0.001, -1, &s->gpu_host_link_gbyte_s);
    return st;
}

static dl_status_t parse_nics(const char *file, const cJSON *nic, dl_system_t *s)
{
    if (!nic)
        return DL_OK;
    dl_status_t st = count(file, nic, "count", 0, DL_SYSTEM_MAX_GPN, -1, &s->nics);
    if (st == DL_OK)
        st = num(file, nic, "speed_gbit_s", 0, s->nics > 0 ? -1 : 0, &s->nic_gbit);
    s->gdr = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(nic, "gdr"));
    return st;
}

static dl_status_t parse_system(const char *file, const cJSON *j, dl_system_t *s)
{
    static const char *const keys[] = {"name", "description", "gpus_per_node", "nodes", "p2p",
                                       "nics", "launch_us", "jitter", "paths", "source", "gpu"};
    if (!cJSON_IsObject(j))
        return bad(file, "not a JSON object", NULL);
    dl_status_t st = only_keys(file, j, keys, DL_ARRAY_SIZE(keys), "unknown key");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (st == DL_OK && !cJSON_IsString(name))
        return bad(file, "missing \"name\"", NULL);
    if (st == DL_OK)
        snprintf(s->name, sizeof(s->name), "%s", name->valuestring);
    if (st == DL_OK)
        st = count(file, j, "gpus_per_node", 1, DL_SYSTEM_MAX_GPN, -1, &s->gpus_per_node);
    if (st == DL_OK)
        st = count(file, j, "nodes", 1, DL_SYSTEM_MAX_RANKS, 1, &s->nodes);
    if (st == DL_OK)
        st = num(file, j, "launch_us", 0, 5, &s->launch_us);
    if (st == DL_OK)
        st = num(file, j, "jitter", 0, 0.005, &s->jitter);
    if (st == DL_OK)
        st = parse_nics(file, cJSON_GetObjectItemCaseSensitive(j, "nics"), s);
    s->p2p = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "p2p"));
    if (st == DL_OK)
        st = parse_gpu(file, cJSON_GetObjectItemCaseSensitive(j, "gpu"), s);
    if (st == DL_OK)
        st = parse_paths(file, cJSON_GetObjectItemCaseSensitive(j, "paths"), s);
    return st;
}

dl_status_t dl_system_read(const char *path, dl_system_t *s)
{
    char *text = NULL;
    size_t len = 0;
    memset(s, 0, sizeof(*s));
    if (dl_read_file(path, &text, &len) != DL_OK)
        return bad(path, "cannot be read:", dl_read_error());
    snprintf(s->file, sizeof(s->file), "%s", path);
    cJSON *j = dl_json_parse_whole(text, len);
    dl_status_t st = j ? parse_system(path, j, s) : bad(path, "is not valid JSON", NULL);
    cJSON_Delete(j);
    free(text);
    return st;
}

dl_status_t dl_system_load(const char *opt, const char *name, dl_system_t *s)
{
    char path[1024], mean[128] = "", near[64];
    dl_status_t st = dl_data_find("DLCOMM_SYSTEMS", "systems", name, path, sizeof(path));
    if (st == DL_ERR_USAGE) {
        dl_err("%s: a name of %zu bytes; at most %zu", opt, strlen(name), sizeof(path) - 1);
        return DL_ERR_USAGE;
    }
    int is_path = strchr(name, '/') || strstr(name, ".json");
    if (st != DL_OK && is_path) /* the file's own reason */
        return dl_system_read(name, s);
    if (st != DL_OK) {
        if (dl_data_suggest("DLCOMM_SYSTEMS", "systems", name, near, sizeof(near)))
            snprintf(mean, sizeof(mean), " (did you mean '%s'?)", near);
        dl_err("%s %s: no such system%s; names are those of $DLCOMM_SYSTEMS and the shipped "
               "topologies/systems (dlcomm __complete systems), or give a path", opt, name, mean);
        return DL_ERR_INPUT;
    }
    return dl_system_read(path, s);
}
