/* Directories and atomic writes: a reader never sees half a file. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

dl_status_t dl_mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
        return DL_ERR_IO;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) && errno != EEXIST)
            return DL_ERR_IO;
        *p = '/';
    }
    if (mkdir(buf, 0755) && errno != EEXIST)
        return DL_ERR_IO;
    struct stat sb;
    if (stat(buf, &sb) || !S_ISDIR(sb.st_mode))
        return DL_ERR_IO;
    return DL_OK;
}

dl_status_t dl_dir_writable(const char *path)
{
    return access(path, W_OK | X_OK) == 0 ? DL_OK : DL_ERR_IO;
}

dl_status_t dl_write_atomic(const char *path, const void *data, size_t len)
{
    char tmp[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    if (snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp.%ld", dirlen, path,
                 slash ? slash + 1 : path, (long)getpid()) >= (int)sizeof(tmp))
        return DL_ERR_IO;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        dl_err("cannot write %s: %s", path, strerror(errno));
        return DL_ERR_IO;
    }
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            dl_err("cannot write %s: %s", path, strerror(errno));
            close(fd);
            unlink(tmp);
            return DL_ERR_IO;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) || close(fd) || rename(tmp, path)) {
        dl_err("cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return DL_ERR_IO;
    }
    return DL_OK;
}

dl_status_t dl_read_file(const char *path, char **data, size_t *len)
{
    *data = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return DL_ERR_INPUT;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        char *nb = realloc(buf, (cap *= 2) + 1);
        if (!nb)
            free(buf);
        buf = nb;
    }
    int err = ferror(f);
    fclose(f);
    if (!buf)
        return DL_ERR_NOMEM;
    if (err) {
        free(buf);
        return DL_ERR_INPUT;
    }
    buf[n] = '\0';
    *data = buf;
    if (len)
        *len = n;
    return DL_OK;
}
