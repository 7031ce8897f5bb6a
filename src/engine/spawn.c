/* Starting and ending one worker: posix_spawn of this same executable, no
 * shell, the profile's environment, logs in the run folder. */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../sys/lastwords.h"
#include "../sys/watchdog.h"

extern char **environ;

static int env_has(char **env, int n, const char *name)
{
    size_t l = strlen(name);
    for (int i = 0; i < n; i++)
        if (strncmp(env[i], name, l) == 0 && env[i][l] == '=')
            return 1;
    return 0;
}

/* Sets NAME=VALUE (kv) in env, replacing an existing entry. */
static void env_put(char **env, int *n, char *kv)
{
    size_t l = (size_t)(strchr(kv, '=') - kv);
    for (int i = 0; i < *n; i++)
        if (strncmp(env[i], kv, l + 1) == 0) {
            env[i] = kv;
            return;
        }
    env[(*n)++] = kv;
}

/* The supervisor's environment plus the profile's, and the NCCL debug log. */
static char **build_env(const dl_profile_t *p, const char *nccl_log, char **owned, int *nowned)
{
    int n = 0, base = 0;
    while (environ[base])
        base++;
    char **env = calloc((size_t)(base + p->nenv + 4), sizeof(char *));
    if (!env)
        dl_watchdog_abort("out of memory (a worker's environment)");
    const char *nvls = getenv("NCCL_NVLS_ENABLE");
    for (int i = 0; i < base; i++)
        env[n++] = environ[i];
    for (int i = 0; i < p->nenv; i++)
        env_put(env, &n, p->env[i]);
    if (!env_has(env, n, "NCCL_DEBUG")) {
        owned[*nowned] = strdup("NCCL_DEBUG=INFO");
        env_put(env, &n, owned[(*nowned)++]);
    }
    size_t l = strlen(nccl_log) + 32;
    owned[*nowned] = malloc(l);
    snprintf(owned[*nowned], l, "NCCL_DEBUG_FILE=%s", nccl_log);
    env_put(env, &n, owned[(*nowned)++]);
    if (nvls) { /* what the host set stays, whatever the profile says */
        l = strlen(nvls) + 32;
        owned[*nowned] = malloc(l);
        snprintf(owned[*nowned], l, "NCCL_NVLS_ENABLE=%s", nvls);
        env_put(env, &n, owned[(*nowned)++]);
    }
    env[n] = NULL;
    return env;
}

/* The worker's two logs, made new in RUNDIR/workers (checked: this run's
 * or the caller's own, see dl_dir_private): its stdout/stderr, and the
 * NCCL debug log, handed over as fd 4 so that what NCCL opens by name
 * (/dev/fd/4) is the file made here, never a link planted since. */
static dl_status_t open_logs(const dl_profile_t *p, const char *run_dir, int rank, int fds[2],
                             char *log, size_t len)
{
    char dir[1700], name[2][320];
    int dfd = -1;
    snprintf(dir, sizeof(dir), "%s/workers", run_dir);
    snprintf(name[0], sizeof(name[0]), "%s.rank%d.log", p->name, rank);
    snprintf(name[1], sizeof(name[1]), "%s.rank%d.nccl.log", p->name, rank);
    snprintf(log, len, "%s/%s", dir, name[0]);
    fds[0] = fds[1] = -1;
    dl_status_t st = dl_dir_private(dir, &dfd);
    for (int i = 0; i < 2 && st == DL_OK; i++)
        st = dl_create_in(dfd, dir, name[i], &fds[i]);
    if (dfd >= 0)
        close(dfd);
    if (st != DL_OK)
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    return st;
}

/* fd moved to 5 or above: the child's dup2s onto 3 and 4 then never
 * overwrite one another's source. */
static void above_4(int *fd)
{
    int hi = *fd > 4 ? *fd : fcntl(*fd, F_DUPFD_CLOEXEC, 5);
    if (hi != *fd && hi >= 0) {
        close(*fd);
        *fd = hi;
    }
}

dl_status_t dl_worker_spawn(const dl_profile_t *p, const char *run_dir, int rank,
                            dl_worker_t *w)
{
    char rk[16];
    int logs[2];
    memset(w, 0, sizeof(*w));
    w->fd = -1;
    snprintf(rk, sizeof(rk), "%d", rank);
    dl_status_t st = open_logs(p, run_dir, rank, logs, w->log, sizeof(w->log));
    if (st != DL_OK)
        return st;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        dl_err("rank %d: socketpair: %s", rank, strerror(errno));
        close(logs[0]);
        close(logs[1]);
        return DL_ERR_INTERNAL;
    }
    int logfd = logs[0];
    above_4(&sv[1]);
    above_4(&logs[1]);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, logfd, 1);
    posix_spawn_file_actions_adddup2(&fa, logfd, 2);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
    posix_spawn_file_actions_adddup2(&fa, logs[1], 4);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    posix_spawn_file_actions_addclosefrom_np(&fa, 5); /* MPI's sockets stay with MPI */
#endif
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, deflt;
    sigemptyset(&none);
    sigemptyset(&deflt);
    sigaddset(&deflt, SIGINT);
    sigaddset(&deflt, SIGTERM);
    sigaddset(&deflt, DL_LW_STOP_SIGNAL);
    sigaddset(&deflt, SIGPIPE);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &deflt);
    /* Its own process group: the supervisor ends it and anything it started. */
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
    char *owned[4];
    int nowned = 0;
    char **env = build_env(p, "/dev/fd/4", owned, &nowned);
    char *argv[] = {"dlcomm", "__worker", (char *)run_dir, (char *)p->name, rk, NULL};
    int rc = posix_spawn(&w->pid, "/proc/self/exe", &fa, &at, argv, env);
    for (int i = 0; i < nowned; i++)
        free(owned[i]);
    free(env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(logfd);
    close(logs[1]);
    close(sv[1]);
    if (rc) {
        dl_err("rank %d: cannot start a worker for profile %s: %s", rank, p->name, strerror(rc));
        close(sv[0]);
        return DL_ERR_INTERNAL;
    }
    w->fd = sv[0];
    w->running = 1;
    return DL_OK;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits up to grace_s for the worker to exit; 1 when it did. */
static int reap_within(dl_worker_t *w, double grace_s)
{
    double end = dl_now() + grace_s;
    do {
        pid_t r = waitpid(w->pid, &w->wstatus, WNOHANG);
        if (r == w->pid || (r < 0 && errno == ECHILD)) {
            w->running = 0;
            return 1;
        }
        sleep_ms(10);
    } while (dl_now() < end);
    return 0;
}

void dl_worker_end(dl_worker_t *w, double grace_s)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    if (!w->running)
        return;
    if (reap_within(w, 0))
        return;
    kill(-w->pid, SIGTERM);
    if (reap_within(w, grace_s))
        return;
    kill(-w->pid, SIGKILL);
    reap_within(w, 30);
}

dl_status_t dl_worker_wait_exit(dl_worker_t *w, double grace_s)
{
    if (w->running && !reap_within(w, grace_s))
        return DL_ERR_TIMEOUT;
    return DL_OK;
}

void dl_worker_describe_exit(const dl_worker_t *w, char *buf, size_t len)
{
    if (w->running)
        snprintf(buf, len, "still running");
    else if (WIFSIGNALED(w->wstatus))
        snprintf(buf, len, "killed by %s (signal %d, %s)", dl_lw_signame(WTERMSIG(w->wstatus)),
                 WTERMSIG(w->wstatus), strsignal(WTERMSIG(w->wstatus)));
    else
        snprintf(buf, len, "exited with code %d", WEXITSTATUS(w->wstatus));
}

void dl_worker_last_error(const char *log, int errors_only, char *buf, size_t len)
{
    char *text = NULL;
    size_t n = 0;
    buf[0] = '\0';
    if (dl_read_file(log, &text, &n) != DL_OK)
        return;
    /* The last line dl_err wrote is where the worker said what went wrong;
     * later notes (its teardown) are not. Without one, its last line. */
    char *last = NULL, *last_err = NULL;
    for (char *p = text; (p = strstr(p, "dlcomm: ")); p++)
        if (p == text || p[-1] == '\n') {
            last = p;
            if (strncmp(p + 8, "error: ", 7) == 0)
                last_err = p;
        }
    if (last_err || errors_only)
        last = last_err;
    if (last) {
        last += 8;
        if (strncmp(last, "error: ", 7) == 0)
            last += 7;
        size_t l = strcspn(last, "\n");
        snprintf(buf, len, "%.*s", (int)(l < len ? l : len - 1), last);
    }
    free(text);
}
