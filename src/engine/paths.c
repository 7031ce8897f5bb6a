/* Where data files (profiles, system descriptions) are found: the user's
 * folders first, so a file of theirs can stand in for a shipped one of the
 * same name, then the tree the executable was built from or installed to. */
#include "engine.h"

#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int dl_data_dirs(const char *envvar, const char *sub, char dirs[][1024], int max)
{
    int n = 0;
    const char *env = envvar ? getenv(envvar) : NULL;
    if (env && *env) {
        char buf[4096];
        snprintf(buf, sizeof(buf), "%s", env);
        char *save = NULL;
        for (char *d = strtok_r(buf, ":", &save); d && n < max; d = strtok_r(NULL, ":", &save))
            snprintf(dirs[n++], 1024, "%s", d);
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len <= 0)
        return n;
    exe[len] = '\0';
    const char *dir = dirname(exe);
    const char *const rel[] = {"../topologies", "../../topologies", "../share/dlcomm"};
    for (size_t i = 0; i < DL_ARRAY_SIZE(rel) && n < max; i++) {
        char cand[PATH_MAX + 64], real[PATH_MAX];
        snprintf(cand, sizeof(cand), "%s/%s/%s", dir, rel[i], sub);
        if (realpath(cand, real) && strlen(real) < 1024 && access(real, R_OK | X_OK) == 0)
            snprintf(dirs[n++], 1024, "%.1023s", real);
    }
    return n;
}

dl_status_t dl_data_find(const char *envvar, const char *sub, const char *name, char *path,
                         size_t len)
{
    size_t nl = strlen(name);
    if (strchr(name, '/') || (nl > 5 && strcmp(name + nl - 5, ".json") == 0)) {
        if (snprintf(path, len, "%s", name) >= (int)len) /* never a cut name */
            return DL_ERR_USAGE;
        return access(path, R_OK) == 0 ? DL_OK : DL_ERR_INPUT;
    }
    char dirs[8][1024];
    int n = dl_data_dirs(envvar, sub, dirs, 8);
    for (int i = 0; i < n; i++) {
        if (snprintf(path, len, "%s/%s.json", dirs[i], name) >= (int)len)
            return DL_ERR_USAGE;
        if (access(path, R_OK) == 0)
            return DL_OK;
    }
    return DL_ERR_INPUT;
}
