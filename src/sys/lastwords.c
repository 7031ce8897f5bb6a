/* How each rank ended when it did not end normally (see lastwords.h). */
#include "lastwords.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../results/results.h"
#include "../util/util.h"

typedef struct {
    int32_t pid;
    int32_t state; /* DL_LW_RUNNING, DL_LW_FAILED, DL_LW_TIMEOUT or the signal caught */
    int32_t recorded; /* rank 0's slot: the final run.json is written */
} dl_lw_slot_t;

static dl_lw_slot_t *g_slots; /* rank 0's host only; NULL elsewhere */
static int g_rank, g_nranks;
static char g_prefix[400];    /* "dlcomm: error: rank R (host H): killed by " */
static size_t g_prefix_len;

static const char *const names[] = {
    [SIGHUP] = "SIGHUP", [SIGINT] = "SIGINT", [SIGQUIT] = "SIGQUIT", [SIGILL] = "SIGILL",
    [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT", [SIGBUS] = "SIGBUS", [SIGFPE] = "SIGFPE",
    [SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
    [SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM", [SIGXCPU] = "SIGXCPU",
    [SIGXFSZ] = "SIGXFSZ", [SIGSYS] = "SIGSYS",
};
static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

const char *dl_lw_signame(int sig)
{
    if (sig > 0 && (size_t)sig < DL_ARRAY_SIZE(names) && names[sig])
        return names[sig];
    return "a signal";
}

void dl_lw_note(int state)
{
    if (g_slots && g_rank < g_nranks)
        __atomic_store_n(&g_slots[g_rank].state, state, __ATOMIC_SEQ_CST);
}

void dl_lw_recorded(void)
{
    if (g_slots)
        __atomic_store_n(&g_slots[0].recorded, 1, __ATOMIC_SEQ_CST);
}

void dl_lw_wait_recorded(double max_s)
{
    struct timespec ms = {0, 2000000L};
    double end = dl_now() + max_s;
    while (dl_now() < end && !(g_slots && __atomic_load_n(&g_slots[0].recorded, __ATOMIC_SEQ_CST)))
        nanosleep(&ms, NULL);
}

/* A crash: say so in one write, leave it in the slot, die of it. */
static void on_fatal(int sig)
{
    const char *n = dl_lw_signame(sig);
    char line[480];
    size_t l = strlen(n);
    memcpy(line, g_prefix, g_prefix_len);
    memcpy(line + g_prefix_len, n, l);
    line[g_prefix_len + l] = '\n';
    ssize_t w = write(2, line, g_prefix_len + l + 1);
    (void)w;
    dl_lw_note(sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

void dl_lw_open(MPI_Comm comm, const char *dir, int rank, int nranks, const char *host)
{
    g_rank = rank;
    g_nranks = nranks;
    int n = snprintf(g_prefix, sizeof(g_prefix), "dlcomm: error: rank %d (host %.255s): killed by ",
                     rank, host);
    g_prefix_len = n > 0 && (size_t)n < sizeof(g_prefix) ? (size_t)n : 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fatal;
    for (size_t i = 0; i < DL_ARRAY_SIZE(fatal); i++)
        sigaction(fatal[i], &sa, NULL);

    char path[4200], host0[256];
    snprintf(path, sizeof(path), "%s/.dlcomm.ranks", dir);
    size_t size = (size_t)nranks * sizeof(dl_lw_slot_t);
    int ok = 1;
    if (rank == 0) {
        unlink(path); /* one a killed run left */
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        /* Its blocks taken now: a page of a sparse file on a full
         * filesystem is SIGBUS at the first store through the mapping. */
        ok = fd >= 0 && posix_fallocate(fd, 0, (off_t)size) == 0;
        if (fd >= 0)
            close(fd);
    }
    snprintf(host0, sizeof(host0), "%s", host);
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    MPI_Bcast(host0, sizeof(host0), MPI_CHAR, 0, comm);
    if (ok && strcmp(host0, host) == 0) { /* a shared folder elsewhere is no shared memory */
        int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        /* the file rank 0 made: one name, this user's (never one swapped in) */
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
            st.st_uid == geteuid() && (size_t)st.st_size == size) {
            void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED) {
                g_slots = m;
                g_slots[rank].pid = (int32_t)getpid();
            }
        }
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(comm);
    if (rank == 0)
        unlink(path); /* the mappings stay; nothing is left in the folder */
}

/* A process of this host that is gone (or a zombie not yet reaped); for a
 * zombie, *how receives its wait status' signal. */
static int gone(pid_t pid, int *how)
{
    char p[64], buf[1024];
    *how = 0;
    snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return kill(pid, 0) != 0 && errno == ESRCH;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *c = strrchr(buf, ')');
    if (!c || c[1] != ' ' || c[2] != 'Z')
        return 0;
    /* Field 52 (exit_code, Linux 3.5+): the wait status. */
    char *s = c + 2;
    for (int field = 3; field < 52 && s; field++)
        s = (s = strchr(s, ' ')) ? s + 1 : NULL;
    int status;
    if (s && sscanf(s, "%d", &status) == 1 && (status & 0x7f) && (status & 0x7f) != 0x7f)
        *how = status & 0x7f;
    return 1;
}

static void set_str(cJSON *o, const char *k, const char *v)
{
    if (cJSON_GetObjectItem(o, k))
        cJSON_ReplaceItemInObject(o, k, cJSON_CreateString(v));
    else
        cJSON_AddStringToObject(o, k, v);
}

/* What the profile already says of rank r (an unanswered agreement) is
 * replaced by what its slot says. */
static void drop_rank(cJSON *fl, cJSON *fr, int r)
{
    for (int i = cJSON_GetArraySize(fl) - 1; i >= 0; i--) {
        cJSON *rk = cJSON_GetObjectItem(cJSON_GetArrayItem(fl, i), "rank");
        if (cJSON_IsNumber(rk) && rk->valueint == r)
            cJSON_DeleteItemFromArray(fl, i);
    }
    for (int i = cJSON_GetArraySize(fr) - 1; i >= 0; i--) {
        cJSON *rk = cJSON_GetArrayItem(fr, i);
        if (cJSON_IsNumber(rk) && rk->valueint == r)
            cJSON_DeleteItemFromArray(fr, i);
    }
}

static int interrupting(int sig)
{
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == DL_LW_STOP_SIGNAL;
}

int dl_lw_record(cJSON *profile, const char *hosts, int nranks)
{
    if (!g_slots || !profile)
        return 0;
    cJSON *fl = cJSON_GetObjectItem(profile, "failures");
    cJSON *fr = cJSON_GetObjectItem(profile, "failed_ranks");
    int killed = 0, ended = 0;
    char first[400] = "", first_end[400] = "";
    for (int r = 1; r < nranks && r < g_nranks; r++) {
        int state = __atomic_load_n(&g_slots[r].state, __ATOMIC_SEQ_CST), how = 0, inferred = 0;
        pid_t pid = g_slots[r].pid;
        if (state > 0 && !interrupting(state))
            how = state;
        else if (state == DL_LW_RUNNING && pid > 0 && gone(pid, &how)) {
            inferred = how == 0; /* nothing to read: only SIGKILL ends a rank without a word */
            if (inferred)
                how = SIGKILL;
        }
        if (!how && state >= 0)
            continue;
        const char *host = hosts ? hosts + (size_t)r * 256 : "";
        char reason[400];
        if (how)
            snprintf(reason, sizeof(reason), "rank %d (host %s, pid %d): killed by %s%s", r, host,
                     (int)pid, dl_lw_signame(how), inferred ? " (it ended without a word)" : "");
        else
            snprintf(reason, sizeof(reason), "rank %d (host %s): %s; it ended the job", r, host,
                     state == DL_LW_TIMEOUT ? "no progress for --timeout" : "its collective failed");
        if (!fl)
            fl = cJSON_AddArrayToObject(profile, "failures");
        if (!fr)
            fr = cJSON_AddArrayToObject(profile, "failed_ranks");
        drop_rank(fl, fr, r);
        cJSON *f = cJSON_CreateObject();
        cJSON_AddNumberToObject(f, "rank", r);
        cJSON_AddStringToObject(f, "host", host);
        cJSON_AddNumberToObject(f, "pid", pid);
        cJSON_AddStringToObject(f, "kind", how ? "killed" : state == DL_LW_TIMEOUT ? "timeout" : "error");
        if (how)
            cJSON_AddStringToObject(f, "signal", dl_lw_signame(how));
        if (inferred)
            cJSON_AddBoolToObject(f, "inferred", 1);
        cJSON_AddStringToObject(f, "reason", reason);
        cJSON_AddItemToArray(fl, f);
        cJSON_AddItemToArray(fr, cJSON_CreateNumber(r));
        if (how) {
            dl_err("%s", reason);
            if (!killed++)
                snprintf(first, sizeof(first), "%s", reason);
        } else if (!ended++) {
            snprintf(first_end, sizeof(first_end), "%s", reason);
            dl_record_set_status(profile, state == DL_LW_TIMEOUT ? DL_REC_TIMEOUT : DL_REC_ERROR, NULL);
        }
    }
    if (killed)
        dl_record_set_status(profile, DL_REC_CRASHED, NULL);
    if (killed || ended)
        set_str(profile, "reason", killed ? first : first_end);
    return killed + ended;
}

/* ---- SIGINT/SIGTERM answered outside the handler ---- */

static sem_t g_stop_sem;
static volatile sig_atomic_t g_stop_sig;
static void (*g_stop_cb)(int, void *);
static void *g_stop_arg;

static void on_stop(int sig)
{
    if (g_stop_sig)
        return; /* a second ctrl-c: the first is being answered */
    g_stop_sig = sig;
    dl_lw_note(sig);
    sem_post(&g_stop_sem);
}

static void *stop_thread(void *arg)
{
    (void)arg;
    while (sem_wait(&g_stop_sem) != 0 && errno == EINTR)
        ;
    g_stop_cb(g_stop_sig, g_stop_arg);
    return NULL;
}

dl_status_t dl_lw_on_interrupt(void (*cb)(int sig, void *arg), void *arg)
{
    g_stop_cb = cb;
    g_stop_arg = arg;
    sem_init(&g_stop_sem, 0, 0);
    pthread_t tid;
    int rc = pthread_create(&tid, NULL, stop_thread, NULL);
    if (rc != 0) { /* an interrupt would end the process before its rows were recorded */
        dl_err("cannot start the thread that records an interrupted run (%s)", strerror(rc));
        return DL_ERR_INTERNAL;
    }
    pthread_detach(tid);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sa.sa_flags = SA_RESTART; /* MPI's own calls go on undisturbed */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(DL_LW_STOP_SIGNAL, &sa, NULL);
    return DL_OK;
}
