/* A run owns its output folder: one live run per folder (a lock held for
 * the run's life), and a finished run is never overwritten unless the user
 * says so. Without this, two sweeps with one --out both end 0 and the last
 * writer's run.json replaces the other's. */
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static int claim_fd = -1; /* held until the process ends; closing frees it */

dl_status_t dl_out_claim(const char *dir, int overwrite)
{
    char path[4096];
    if (snprintf(path, sizeof(path), "%s/.dlcomm.lock", dir) >= (int)sizeof(path)) {
        dl_err("--out %s: the path is too long", dir);
        return DL_ERR_USAGE;
    }
    int fd = dl_open_lock(path);
    if (fd < 0) {
        dl_err("--out %s: cannot lock the folder (%s)", dir, strerror(errno));
        return DL_ERR_IO;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        dl_err("--out %s: another dlcomm run is writing to this folder; choose another --out",
               dir);
        close(fd);
        return DL_ERR_USAGE;
    }
    struct stat sb;
    if (snprintf(path, sizeof(path), "%s/run.json", dir) < (int)sizeof(path) &&
        lstat(path, &sb) == 0 && !overwrite) {
        dl_err("--out %s holds a finished run (run.json); choose another folder or pass "
               "--overwrite to replace it", dir);
        close(fd);
        return DL_ERR_USAGE;
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && write(fd, pid, (size_t)n) < 0)
        (void)0; /* the pid is a courtesy to a person looking; the lock is the flock */
    if (claim_fd >= 0)
        close(claim_fd);
    claim_fd = fd;
    return DL_OK;
}
