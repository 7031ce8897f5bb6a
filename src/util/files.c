/* Directories and atomic writes: a reader never sees half a file. */
#include "util.h"

#include <cjson/cJSON.h>

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

/* Why a folder is not one this run may write files into by name (another
 * user could plant a link there), or NULL when it may. */
static const char *dir_unsafe(const struct stat *sb, int made)
{
    if (S_ISLNK(sb->st_mode))
        return "a link";
    if (!S_ISDIR(sb->st_mode))
        return "not a folder";
    if (sb->st_uid != geteuid() && !made) /* made here: NFS may give root's to nobody */
        return "owned by another user";
    if (sb->st_mode & (S_IWGRP | S_IWOTH))
        return "writable by other users";
    return NULL;
}

dl_status_t dl_dir_private(const char *path, int *dfd)
{
    /* mkdir never follows a link; the folder is then opened without
     * following one, and what is checked is what was opened (fstat): a
     * link swapped in between is caught. Files are then made in it by
     * dl_create_in (O_EXCL), which writes through nothing planted. */
    int made = mkdir(path, 0755) == 0;
    if (!made && errno != EEXIST) {
        dl_err("cannot create %s: %s", path, strerror(errno));
        return DL_ERR_IO;
    }
    struct stat sb;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const char *why = fd >= 0 ? (fstat(fd, &sb) ? strerror(errno) : dir_unsafe(&sb, made))
                      : lstat(path, &sb)      ? strerror(errno)
                      : dir_unsafe(&sb, made) ? dir_unsafe(&sb, made)
                                              : strerror(errno);
    if (why) {
        dl_err("%s: a folder this run %s, %s: refused (a link another user planted in it "
               "would be followed); remove it or choose another place",
               path, made ? "made" : "did not make", why);
        if (fd >= 0)
            close(fd);
        return DL_ERR_USAGE;
    }
    if (dfd)
        *dfd = fd;
    else
        close(fd);
    return DL_OK;
}

dl_status_t dl_create_in(int dfd, const char *dir, const char *name, int *fd)
{
    /* An earlier run's file is removed by name (never followed), then the
     * file is made new: O_EXCL, so nothing that appeared since is opened. */
    if (unlinkat(dfd, name, 0) && errno != ENOENT) {
        dl_err("cannot replace %s/%s: %s", dir, name, strerror(errno));
        return DL_ERR_IO;
    }
    *fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (*fd < 0) {
        dl_err("cannot write %s/%s: %s", dir, name, strerror(errno));
        return DL_ERR_IO;
    }
    return DL_OK;
}

int dl_open_lock(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
    struct stat sb;
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_nlink == 1)
        return fd;
    close(fd);
    errno = S_ISREG(sb.st_mode) ? EMLINK : EINVAL;
    return -1;
}

dl_status_t dl_write_atomic(const char *path, const void *data, size_t len)
{
    /* The temp file is made by mkstemp in the target's folder: a name no
     * one can guess, created with O_EXCL, so a link planted in a shared
     * folder is never followed or written through. */
    char tmp[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    if (snprintf(tmp, sizeof(tmp), "%.*s.%s.XXXXXX", dirlen, path, slash ? slash + 1 : path) >=
        (int)sizeof(tmp)) {
        dl_err("cannot write %s: the path is too long", path);
        return DL_ERR_IO;
    }
    /* Only a regular file is replaced: the rename would put a file where a
     * device (/dev/null, for root), a FIFO, a folder or a link was. */
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        dl_err("cannot write %s: %s, not a file dlcomm may replace", path,
               S_ISDIR(sb.st_mode) ? "a folder" : S_ISLNK(sb.st_mode) ? "a link" : "a special file");
        return DL_ERR_WRITE; /* options are checked before the work: this is after it */
    }
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        dl_err("cannot write %s: %s", path, strerror(errno));
        return DL_ERR_WRITE;
    }
    const char *p = data;
    size_t left = len;
    int ok = fchmod(fd, 0644) == 0;
    while (ok && left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            ok = 0;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (!ok || fsync(fd)) {
        dl_err("cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        return DL_ERR_WRITE;
    }
    if (close(fd) || rename(tmp, path)) {
        dl_err("cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return DL_ERR_WRITE;
    }
    return DL_OK;
}

dl_status_t dl_out_file_check(const char *opt, const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    struct stat sb;
    if (!*path || strlen(path) + 16 >= sizeof(dir)) {
        dl_err("%s: a file name of %zu bytes; 1 .. %zu", opt, strlen(path), sizeof(dir) - 17);
        return DL_ERR_USAGE;
    }
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        dl_err("%s %s: %s, not a file dlcomm may replace", opt, path,
               S_ISDIR(sb.st_mode) ? "a folder" : S_ISLNK(sb.st_mode) ? "a link" : "a special file");
        return DL_ERR_USAGE;
    }
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (dl_dir_writable(dir[0] ? dir : "/") != DL_OK) {
        dl_err("%s %s: cannot write into %s", opt, path, dir[0] ? dir : "/");
        return DL_ERR_IO;
    }
    return DL_OK;
}

static const char *read_why = "";

const char *dl_read_error(void)
{
    return read_why;
}

dl_status_t dl_read_file(const char *path, char **data, size_t *len)
{
    /* Only a regular file of bounded size, read whole: O_NONBLOCK so that a
     * FIFO without a writer is refused at once, not waited on; fstat on the
     * opened file, so what is checked is what is read. */
    *data = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        read_why = strerror(errno);
        return DL_ERR_INPUT;
    }
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        read_why = S_ISDIR(sb.st_mode) ? "a folder, not a file" : "not a regular file";
        close(fd);
        return DL_ERR_INPUT;
    }
    if ((uint64_t)sb.st_size > DL_READ_MAX) {
        read_why = "larger than the 256 MiB a dlcomm input may be";
        close(fd);
        return DL_ERR_INPUT;
    }
    size_t cap = (size_t)sb.st_size, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return DL_ERR_NOMEM;
    }
    for (;;) { /* a file that grows while read is cut at its size when opened */
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            read_why = strerror(errno);
            free(buf);
            close(fd);
            return DL_ERR_INPUT;
        }
        n += (size_t)r;
        if (r == 0 || n == cap)
            break;
    }
    close(fd);
    buf[n] = '\0';
    *data = buf;
    if (len)
        *len = n;
    return DL_OK;
}

void *dl_json_parse_whole(const char *buf, size_t len)
{
    /* One document and nothing after it but white space: a second document
     * or trailing bytes make the file not what it claims to be. A NUL
     * inside the text ends cJSON's view early, so it is refused too. */
    if (strlen(buf) != len)
        return NULL;
    const char *end = NULL;
    return cJSON_ParseWithOpts(buf, &end, 1);
}

const char *dl_no_gpu_why(const char *cuda_words, char *buf, size_t len)
{
    /* CUDA's words then mislead ("driver version is insufficient"): left out. */
    if (access("/proc/driver/nvidia/version", F_OK) != 0)
        snprintf(buf, len, "no NVIDIA driver on this host (no /proc/driver/nvidia/version)");
    else
        snprintf(buf, len, "no CUDA GPU is visible here (%s)", cuda_words);
    return buf;
}
