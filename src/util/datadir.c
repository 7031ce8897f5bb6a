/* Where data files (profiles, system descriptions) are found: the user's
 * folders first, so a file of theirs can stand in for a shipped one of the
 * same name; then, for a dlcomm run from its build tree, the source tree it
 * was built from; then the data folder of the prefix it was installed to
 * (found beside the executable, then as compiled in); then topologies/
 * beside the executable (a copied tree). */
#include "util.h"

#include <dirent.h>
#include <errno.h>

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Compiled in by CMakeLists.txt: the source tree's topologies/, the build
 * tree, and <prefix>/<datadir>/dlcomm. */
#ifndef DL_SOURCE_DATA_DIR
#define DL_SOURCE_DATA_DIR ""
#endif
#ifndef DL_BUILD_DIR
#define DL_BUILD_DIR ""
#endif
#ifndef DL_INSTALL_DATA_DIR
#define DL_INSTALL_DATA_DIR ""
#endif

/* Adds base/sub when it is a readable folder not already listed. */
static int add_dir(char dirs[][1024], int n, int max, const char *base, const char *sub)
{
    char cand[PATH_MAX + 64], real[PATH_MAX];
    if (!base[0] || n >= max)
        return n;
    snprintf(cand, sizeof(cand), "%s/%s", base, sub);
    if (!realpath(cand, real) || strlen(real) >= 1024 || access(real, R_OK | X_OK) != 0)
        return n;
    for (int i = 0; i < n; i++)
        if (strcmp(dirs[i], real) == 0)
            return n;
    snprintf(dirs[n], 1024, "%s", real);
    return n + 1;
}

/* Whether the executable lies in the build tree it was compiled in. */
static int in_build_tree(const char *exe_dir)
{
    char real[PATH_MAX];
    if (!DL_BUILD_DIR[0] || !realpath(DL_BUILD_DIR, real))
        return 0;
    size_t l = strlen(real);
    return strncmp(exe_dir, real, l) == 0 && (exe_dir[l] == '\0' || exe_dir[l] == '/');
}

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
    char exe[PATH_MAX] = "";
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[len > 0 ? len : 0] = '\0';
    const char *dir = len > 0 ? dirname(exe) : "";
    char base[PATH_MAX + 32];
    if (dir[0] && in_build_tree(dir))
        n = add_dir(dirs, n, max, DL_SOURCE_DATA_DIR, sub);
    /* Installed: <prefix>/bin/dlcomm beside <prefix>/share/dlcomm, wherever
     * `cmake --install --prefix` put it; then the prefix compiled in. */
    snprintf(base, sizeof(base), "%s/../share/dlcomm", dir);
    if (dir[0])
        n = add_dir(dirs, n, max, base, sub);
    n = add_dir(dirs, n, max, DL_INSTALL_DATA_DIR, sub);
    const char *const rel[] = {"../topologies", "../../topologies"}; /* a copied tree */
    for (size_t i = 0; i < DL_ARRAY_SIZE(rel) && dir[0]; i++) {
        snprintf(base, sizeof(base), "%s/%s", dir, rel[i]);
        n = add_dir(dirs, n, max, base, sub);
    }
    return n;
}

/* Something is there by that name, readable or not: it is the one meant.
 * An unreadable file, a dangling link or a folder in the user's own folder
 * is then refused by its reader, naming it, rather than passed over for the
 * shipped file of the same name. */
static int present(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

dl_status_t dl_data_find(const char *envvar, const char *sub, const char *name, char *path,
                         size_t len)
{
    size_t nl = strlen(name);
    if (strchr(name, '/') || (nl > 5 && strcmp(name + nl - 5, ".json") == 0)) {
        if (snprintf(path, len, "%s", name) >= (int)len) /* never a cut name */
            return DL_ERR_USAGE;
        return present(path) ? DL_OK : DL_ERR_INPUT;
    }
    char dirs[8][1024];
    int n = dl_data_dirs(envvar, sub, dirs, 8);
    for (int i = 0; i < n; i++) {
        if (snprintf(path, len, "%s/%s.json", dirs[i], name) >= (int)len)
            return DL_ERR_USAGE;
        if (present(path))
            return DL_OK;
    }
    return DL_ERR_INPUT;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

int dl_data_names(const char *envvar, const char *sub, char names[][64], int max)
{
    char dirs[8][1024];
    int nd = dl_data_dirs(envvar, sub, dirs, 8), n = 0;
    for (int d = 0; d < nd; d++) {
        DIR *dh = opendir(dirs[d]);
        struct dirent *de;
        while (dh && (de = readdir(dh)) && n < max) {
            size_t l = strlen(de->d_name);
            if (l <= 5 || l - 5 >= 64 || strcmp(de->d_name + l - 5, ".json") != 0)
                continue;
            snprintf(names[n], 64, "%.*s", (int)(l - 5), de->d_name);
            int dup = 0;
            for (int i = 0; i < n && !dup; i++)
                dup = strcmp(names[i], names[n]) == 0;
            n += !dup;
        }
        if (dh)
            closedir(dh);
    }
    qsort(names, (size_t)n, 64, by_name);
    return n;
}

const char *dl_data_suggest(const char *envvar, const char *sub, const char *word, char *out,
                            size_t len)
{
    char names[128][64];
    const char *ptrs[128];
    int n = dl_data_names(envvar, sub, names, 128);
    for (int i = 0; i < n; i++)
        ptrs[i] = names[i];
    const char *s = dl_suggest(word, ptrs, (size_t)n);
    if (!s)
        return NULL;
    snprintf(out, len, "%s", s);
    return out;
}
