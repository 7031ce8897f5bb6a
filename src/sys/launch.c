/* A launcher run to its end, ending with dlcomm's exit code (launch.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lastwords.h"
#include "launcher.h"

extern char **environ;

#define STATUS_ENV "DLCOMM_LAUNCH_STATUS"
/* After the command is gone, how long its output pipe may stay open (a
 * rank still writing its record after mpirun left). */
#define DRAIN_S 5.0
/* How long the ranks have to record after DL_LW_STOP_SIGNAL (they need
 * well under a second) before the signal itself follows. */
#define ESCALATE_S 5.0

static char g_note_path[PATH_MAX];

/* Appends a line to the launcher's file: it exists (the launcher made
 * it), so never create one, never follow a link, where a path came from
 * the environment. */
static void note_line(const char *path, char c)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char line[2] = {c, '\n'};
    ssize_t w = write(fd, line, sizeof(line));
    (void)w;
    close(fd);
}

void dl_launch_note_init(void)
{
    const char *p = getenv(STATUS_ENV);
    if (!p || !*p || strlen(p) >= sizeof(g_note_path))
        return;
    note_line(p, 's'); /* every process: dlcomm ran on the launcher's host */
    if (dl_launcher_is_rank0())
        memcpy(g_note_path, p, strlen(p) + 1);
}

void dl_launch_note(int code)
{
    if (g_note_path[0])
        note_line(g_note_path, (char)('0' + (code >= 0 && code <= 9 ? code : 9)));
}

/* The launcher's side file, beside the status file: the signal it got. */
static void cause_path(const char *status, char *buf, size_t len)
{
    const char *slash = strrchr(status, '/');
    snprintf(buf, len, "%.*s/signal", slash ? (int)(slash - status) : 0, status);
}

int dl_launch_stop_cause(int sig)
{
    if (sig != DL_LW_STOP_SIGNAL || !g_note_path[0])
        return sig;
    char path[PATH_MAX + 16], buf[16] = "";
    cause_path(g_note_path, path, sizeof(path));
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    int cause = n > 0 ? atoi(buf) : 0;
    return cause == SIGINT || cause == SIGTERM || cause == SIGHUP ? cause : sig;
}

static void write_cause(const char *status, int sig)
{
    char path[PATH_MAX + 16], line[16];
    cause_path(status, path, sizeof(path));
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    int n = snprintf(line, sizeof(line), "%d\n", sig);
    if (fd >= 0) {
        ssize_t w = write(fd, line, (size_t)n);
        (void)w;
        close(fd);
    }
}

/* The worst code in the file (-1 when there is none), and whether any
 * dlcomm process started on this host (r->ran). */
static void read_notes(const char *path, dl_launch_t *r)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    char buf[4096];
    ssize_t n;
    while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] >= '0' && buf[i] <= '9' && buf[i] - '0' > r->noted)
                r->noted = buf[i] - '0';
            r->ran |= buf[i] == 's' || (buf[i] >= '0' && buf[i] <= '9');
        }
    if (fd >= 0)
        close(fd);
}

/* environ with NAME=path set (replacing any inherited one); *kv is freed by
 * the caller. */
static char **env_with_status(const char *path, char **kv)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof(char *));
    size_t l = strlen(STATUS_ENV) + 1 + strlen(path) + 1;
    *kv = malloc(l);
    if (!env || !*kv) {
        free(env);
        free(*kv);
        *kv = NULL;
        return NULL;
    }
    snprintf(*kv, l, "%s=%s", STATUS_ENV, path);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], STATUS_ENV "=", sizeof(STATUS_ENV)) != 0)
            env[m++] = environ[i];
    env[m++] = *kv;
    env[m] = NULL;
    return env;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int code_of(const dl_launch_t *r)
{
    int st = r->status;
    int broke = WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) > 3);
    int lc = WIFEXITED(st) ? WEXITSTATUS(st) : 3;
    if (broke)
        return 3;
    if (r->noted >= 0) { /* the launcher's 1 may be its own: rank 0's word counts */
        int l = lc == 1 ? 0 : lc, c = r->noted > l ? r->noted : l;
        return c > 3 ? 3 : c;
    }
    /* No dlcomm process started here: a launcher that failed (Open MPI
     * could not start), or a command that is not dlcomm's, is a run that
     * broke. Rank 0 on another host alone is taken at the launcher's 0. */
    if (r->watched && !r->ran && (lc != 0 || !r->names_dlcomm))
        return 3;
    return lc == 1 && r->signalled ? 3 : lc;
}

void dl_launch_describe(const dl_launch_t *r, char *buf, size_t len)
{
    if (WIFSIGNALED(r->status))
        snprintf(buf, len, "was killed by %s", dl_lw_signame(WTERMSIG(r->status)));
    else
        snprintf(buf, len, "exited %d%s%s", WEXITSTATUS(r->status), r->signalled ? " after " : "",
                 r->signalled ? dl_lw_signame(r->signalled) : "");
}

/* The child's side: its own group without a terminal, SIGTERM if the
 * launcher dies, dispositions and mask as a fresh process has them. */
static void child(char *const argv[], char **env, int interactive, pid_t parent, int out_fd,
                  int err_fd)
{
    if (!interactive)
        setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) /* the launcher died before the line above */
        _exit(127);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (out_fd >= 0 && (dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0))
        _exit(127);
    execvpe(argv[0], argv, env);
    int e = errno;
    ssize_t w = write(err_fd, &e, sizeof(e));
    (void)w;
    _exit(127);
}

/* What supervise keeps between events. */
typedef struct {
    pid_t pid;
    int interactive, reaped, passed;
    double reaped_at, stop_at;
    const char *status;
} sv_t;

/* A signal to this process while the child runs. The first goes on as
 * DL_LW_STOP_SIGNAL, with its cause left for rank 0; DL_LW_STOP_SIGNAL
 * itself comes from a launcher around this one (dlcomm launch dlcomm
 * launch ...), and is its first signal passed on: the cause is that
 * launcher's. */
static void on_signal(sv_t *v, const struct signalfd_siginfo *si, dl_launch_t *r)
{
    r->signalled = (int)si->ssi_signo;
    /* the terminal sent it to the whole group, the child included */
    if (v->interactive && si->ssi_code == SI_KERNEL) {
        v->passed = 2;
    } else if (v->passed == 0) {
        if (v->status) /* what rank 0 records as the cause */
            write_cause(v->status, dl_launch_stop_cause(r->signalled));
        kill(v->pid, DL_LW_STOP_SIGNAL);
        v->stop_at = now_s();
        v->passed = 1;
    } else {
        kill(v->pid, (int)si->ssi_signo);
        v->passed = 2;
    }
}

/* Whether anything of the child's own process group (a launcher's ranks
 * still writing their record) is left, once the child is reaped. */
static int group_left(const sv_t *v)
{
    return !v->interactive && kill(-v->pid, 0) == 0;
}

/* How long poll may wait now (-1: no limit); 0 ends the wait. */
static int wait_ms(sv_t *v, int out_fd, dl_launch_t *r)
{
    if (v->reaped) {
        double left = DRAIN_S - (now_s() - v->reaped_at);
        if (left <= 0 || (out_fd < 0 && !group_left(v)))
            return 0;
        return out_fd >= 0 ? (int)(left * 1000) + 1 : 20; /* the group: looked at each 20 ms */
    }
    if (v->passed != 1)
        return -1;
    double left = ESCALATE_S - (now_s() - v->stop_at);
    if (left > 0)
        return (int)(left * 1000) + 1;
    kill(v->pid, r->signalled);
    v->passed = 2;
    return -1;
}

static void read_signal(sv_t *v, int sfd, dl_launch_t *r)
{
    struct signalfd_siginfo si;
    if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
        return;
    int st;
    if (si.ssi_signo == SIGCHLD) {
        if (!v->reaped && waitpid(v->pid, &st, WNOHANG) == v->pid) {
            v->reaped = 1;
            v->reaped_at = now_s();
            r->status = st;
        }
    } else if (!v->reaped) {
        on_signal(v, &si, r);
    }
}

/* Waits for the child, passing signals on and output through, until it is
 * reaped, its output closed and its process group gone (or DRAIN_S after
 * it is reaped). The first signal goes on as DL_LW_STOP_SIGNAL (the ranks
 * record and end, and the launcher ends with their code); a second one,
 * or ESCALATE_S without an end, goes on as it came. */
static void supervise(pid_t pid, int sfd, int out_fd, int interactive, const char *status,
                      dl_launch_out_fn out, void *arg, dl_launch_t *r)
{
    sv_t v = {.pid = pid, .interactive = interactive, .status = status};
    for (;;) {
        struct pollfd pf[2] = {{.fd = sfd, .events = POLLIN}, {.fd = out_fd, .events = POLLIN}};
        int ms = wait_ms(&v, out_fd, r);
        if (ms == 0)
            break;
        if (poll(pf, out_fd >= 0 ? 2 : 1, ms) < 0 && errno != EINTR)
            break;
        if (pf[0].revents & POLLIN)
            read_signal(&v, sfd, r);
        if (out_fd >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            char buf[8192];
            ssize_t n = read(out_fd, buf, sizeof(buf));
            if (n > 0)
                out(buf, (size_t)n, arg);
            else if (n == 0 || errno != EINTR) {
                close(out_fd);
                out_fd = -1;
            }
        }
    }
    if (out_fd >= 0)
        close(out_fd);
    if (!v.reaped) { /* the output outlived its drain: the child still must be reaped */
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        r->status = st;
    }
}

/* The file the ranks note their code in, in a folder of its own. */
typedef struct {
    char dir[PATH_MAX], path[PATH_MAX + 16];
    int have_dir, have_file;
} status_file_t;

static void status_make(status_file_t *s)
{
    /* TMPDIR, else /tmp: a TMPDIR that cannot be written is what makes Open
     * MPI fail, and that failure is to be told from a run that ended. */
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof(s->dir), "%s/dlcomm-launch.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    s->have_dir = mkdtemp(s->dir) != NULL;
    if (!s->have_dir) {
        snprintf(s->dir, sizeof(s->dir), "/tmp/dlcomm-launch.XXXXXX");
        s->have_dir = mkdtemp(s->dir) != NULL;
    }
    snprintf(s->path, sizeof(s->path), "%s/status", s->dir);
    int fd = s->have_dir ? open(s->path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600) : -1;
    s->have_file = fd >= 0;
    if (fd >= 0)
        close(fd);
}

static void status_remove(const status_file_t *s)
{
    if (s->have_file) {
        char cause[PATH_MAX + 16];
        unlink(s->path);
        cause_path(s->path, cause, sizeof(cause));
        unlink(cause);
    }
    if (s->have_dir)
        rmdir(s->dir);
}

/* Whether the child's exec worked (its errno comes through ep otherwise). */
static int exec_worked(int ep, pid_t pid, dl_launch_t *r)
{
    int e = 0;
    ssize_t n;
    while ((n = read(ep, &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof(e))
        return 1;
    r->err = e; /* nothing ran */
    while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
        ;
    return 0;
}

/* Forks the child, learns whether its exec worked, and supervises it. */
static void run_child(char *const argv[], char **env, int interactive, int sfd, const char *status,
                      dl_launch_out_fn out, void *arg, dl_launch_t *r)
{
    int ep[2] = {-1, -1}, op[2] = {-1, -1};
    pid_t parent = getpid(), pid = -1;
    if (pipe2(ep, O_CLOEXEC) == 0 && (!out || pipe2(op, O_CLOEXEC) == 0))
        pid = fork();
    else
        r->err = errno;
    if (pid == 0)
        child(argv, env, interactive, parent, op[1], ep[1]);
    if (pid < 0 && !r->err)
        r->err = errno;
    if (ep[1] >= 0)
        close(ep[1]);
    if (op[1] >= 0)
        close(op[1]);
    if (pid > 0 && !interactive)
        setpgid(pid, pid); /* as the child does: whichever runs first */
    r->started = pid > 0 && exec_worked(ep[0], pid, r);
    if (r->started)
        supervise(pid, sfd, op[0], interactive, status, out, arg, r); /* closes op[0] */
    else if (op[0] >= 0)
        close(op[0]);
    if (ep[0] >= 0)
        close(ep[0]);
}

/* Whether a word of the command is this program (by name or path): the
 * command can start dlcomm on other hosts only then. */
static int names_dlcomm(char *const argv[])
{
    char self[PATH_MAX], real[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = '\0';
    for (; *argv; argv++) {
        const char *slash = strrchr(*argv, '/'), *base = slash ? slash + 1 : *argv;
        if (!strcmp(base, "dlcomm") || (n > 0 && realpath(*argv, real) && !strcmp(real, self)))
            return 1;
    }
    return 0;
}

void dl_launch_run(char *const argv[], dl_launch_out_fn out, void *arg, dl_launch_t *r)
{
    memset(r, 0, sizeof(*r));
    r->noted = -1;
    r->names_dlcomm = names_dlcomm(argv);
    r->code = 3;
    status_file_t sf;
    status_make(&sf);
    char *kv = NULL; /* without a status file the launcher's own code is all there is */
    char **env = sf.have_file ? env_with_status(sf.path, &kv) : NULL;
    int interactive = isatty(0) && tcgetpgrp(0) == getpgrp();
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, DL_LW_STOP_SIGNAL); /* a launcher around this one passing its signal on */
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, &old);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (sfd >= 0) {
        run_child(argv, env ? env : environ, interactive, sfd, sf.have_file ? sf.path : NULL, out,
                  arg, r);
        close(sfd);
    } else {
        r->err = errno;
    }
    /* A SIGCHLD or a signal still pending when the mask returns would act
     * now: the signals were passed on, the child reaped. */
    struct timespec zero = {0, 0};
    while (sigtimedwait(&set, NULL, &zero) > 0)
        ;
    sigprocmask(SIG_SETMASK, &old, NULL);
    r->watched = sf.have_file;
    if (sf.have_file)
        read_notes(sf.path, r);
    status_remove(&sf);
    free(env);
    free(kv);
    if (r->started)
        r->code = code_of(r);
}
