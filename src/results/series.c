/* A series of runs in one folder, one timestamped folder each (dlcomm
 * watch): the lock that keeps one writer, a new folder per run, the newest
 * earlier run that ended well, and retention of the newest N. */
#include "results.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

dl_status_t dl_series_lock(const char *root, int *fd)
{
    char path[4096];
    if (dl_mkdir_p(root) != DL_OK || dl_dir_writable(root) != DL_OK) {
        dl_err("--results %s: cannot create or write the folder", root);
        return DL_ERR_USAGE;
    }
    snprintf(path, sizeof(path), "%s/.dlcomm-watch.lock", root);
    *fd = dl_open_lock(path);
    if (*fd < 0) {
        dl_err("--results %s: cannot lock the folder (%s)", root, strerror(errno));
        return DL_ERR_IO;
    }
    if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
        dl_err("--results %s: another dlcomm watch is running there", root);
        close(*fd);
        *fd = -1;
        return DL_ERR_USAGE;
    }
    return DL_OK;
}

/* YYYYMMDDTHHMMSSZ, optionally -N: a folder this series made. */
int dl_series_is_run(const char *name)
{
    static const char form[] = "ddddddddTddddddZ";
    for (size_t i = 0; i < sizeof(form) - 1; i++)
        if (form[i] == 'd' ? (name[i] < '0' || name[i] > '9') : name[i] != form[i])
            return 0;
    const char *t = name + sizeof(form) - 1;
    if (!*t)
        return 1;
    if (*t++ != '-' || !*t)
        return 0;
    for (; *t; t++)
        if (*t < '0' || *t > '9')
            return 0;
    return 1;
}

dl_status_t dl_series_new(const char *root, char *name, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32], path[4096];
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
    for (int k = 1; k < 100; k++) { /* two runs in one second */
        if (k == 1)
            snprintf(name, len, "%s", stamp);
        else
            snprintf(name, len, "%s-%d", stamp, k);
        snprintf(path, sizeof(path), "%s/%s", root, name);
        if (mkdir(path, 0755) == 0)
            return DL_OK;
        if (errno != EEXIST)
            break;
    }
    dl_err("cannot create a run folder in %s: %s", root, strerror(errno));
    return DL_ERR_IO;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int run_only(const struct dirent *e)
{
    return dl_series_is_run(e->d_name);
}

int dl_series_list(const char *root, char ***names)
{
    struct dirent **list = NULL;
    int n = scandir(root, &list, run_only, by_name);
    *names = NULL;
    if (n <= 0)
        return 0;
    *names = calloc((size_t)n, sizeof(char *));
    for (int i = 0; i < n; i++) {
        if (*names)
            (*names)[i] = strdup(list[i]->d_name);
        free(list[i]);
    }
    free(list);
    return *names ? n : 0;
}

void dl_series_list_free(char **names, int n)
{
    for (int i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *f)
{
    (void)sb, (void)f;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

dl_status_t dl_series_remove(const char *root, const char *name)
{
    char path[4096];
    if (!dl_series_is_run(name))
        return DL_ERR_INTERNAL; /* never anything the series did not make */
    snprintf(path, sizeof(path), "%s/%s", root, name);
    if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0) {
        dl_err("cannot remove the old run %s: %s", path, strerror(errno));
        return DL_ERR_IO;
    }
    return DL_OK;
}

/* Ended 0 (ROOT/NAME/watch.json) with a sweep (sweep/run.json). */
static int ended_ok(const char *root, const char *name)
{
    char path[4096], *buf;
    size_t len;
    struct stat sb;
    snprintf(path, sizeof(path), "%s/%s/sweep/run.json", root, name);
    if (stat(path, &sb) != 0)
        return 0;
    snprintf(path, sizeof(path), "%s/%s/watch.json", root, name);
    if (dl_read_file(path, &buf, &len) != DL_OK)
        return 0;
    cJSON *j = dl_json_parse_whole(buf, len);
    free(buf);
    const cJSON *c = cJSON_GetObjectItem(j, "exit_code");
    int ok = cJSON_IsNumber(c) && c->valueint == 0;
    cJSON_Delete(j);
    return ok;
}

void dl_series_last_ok(const char *root, const char *except, char *name, size_t len)
{
    char **names;
    int n = dl_series_list(root, &names);
    name[0] = '\0';
    for (int i = n - 1; i >= 0; i--)
        if (strcmp(names[i], except) != 0 && ended_ok(root, names[i])) {
            snprintf(name, len, "%s", names[i]);
            break;
        }
    dl_series_list_free(names, n);
}

void dl_series_keep(const char *root, int keep, const char *current, const char *baseline)
{
    char **names;
    int n = dl_series_list(root, &names), left = n;
    for (int i = 0; i < n && left > keep; i++) {
        if (strcmp(names[i], current) == 0 || strcmp(names[i], baseline) == 0)
            continue;
        if (dl_series_remove(root, names[i]) == DL_OK) {
            printf("watch: removed %s/%s (--keep %d)\n", root, names[i], keep);
            left--;
        }
    }
    dl_series_list_free(names, n);
}
