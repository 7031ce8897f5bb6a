/* The watchdog thread (watchdog.h): it looks every 100 ms (mpirun,
 * signalled, SIGKILLs the ranks a second after it passes its SIGTERM on). */
#include "watchdog.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/util.h"
#include "launch.h"

#define WATCH_EVERY_NS 100000000L

static dl_watchdog_cfg_t g_cfg;
static _Atomic double g_step_started, g_failed_at;
static char g_step[128];
static pthread_mutex_t g_step_lock = PTHREAD_MUTEX_INITIALIZER;

void dl_watchdog_step(const char *name)
{
    if (name) {
        pthread_mutex_lock(&g_step_lock);
        snprintf(g_step, sizeof(g_step), "%s", name);
        pthread_mutex_unlock(&g_step_lock);
    }
    atomic_store(&g_step_started, dl_now());
}

void dl_watchdog_idle(void)
{
    atomic_store(&g_step_started, 0.0);
    atomic_store(&g_failed_at, 0.0);
}

void dl_watchdog_failed(void) { atomic_store(&g_failed_at, dl_now()); }

double dl_watchdog_timeout(void) { return g_cfg.timeout_s; }

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Why the job ends now, or -1 while it may go on. */
static int expired(int *sig)
{
    double now = dl_now(), t = atomic_load(&g_step_started), f = atomic_load(&g_failed_at);
    if (t > 0 && now - t > g_cfg.timeout_s)
        return DL_WD_TIMEOUT; /* a step past the timeout: said as such, whatever came too */
    if (f > 0 && now - f > g_cfg.fail_grace_s)
        return DL_WD_FAILED;
    *sig = g_cfg.signalled ? g_cfg.signalled() : 0;
    return *sig ? DL_WD_SIGNAL : -1;
}

static void *watch(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec ts = {0, WATCH_EVERY_NS};
        nanosleep(&ts, NULL);
        int sig = 0, why = expired(&sig);
        if (why < 0)
            continue;
        char step[128];
        pthread_mutex_lock(&g_step_lock);
        snprintf(step, sizeof(step), "%s", g_step);
        pthread_mutex_unlock(&g_step_lock);
        double wait = g_cfg.on_expire(g_cfg.arg, (dl_wd_why_t)why, sig, step);
        if (wait < 0)
            continue;
        sleep_s(wait);
        fflush(NULL);
        dl_launch_note(3);
        MPI_Abort(MPI_COMM_WORLD, 3);
        _exit(3);
    }
    return NULL;
}

void dl_watchdog_abort(const char *what)
{
    if (what)
        dl_err("%s", what);
    fflush(NULL);
    dl_launch_note(3);
    MPI_Abort(MPI_COMM_WORLD, 3); /* the peers would wait on this rank forever */
    _exit(3);
}

void dl_watchdog_start(const dl_watchdog_cfg_t *cfg)
{
    g_cfg = *cfg;
    dl_watchdog_step("start");
    pthread_t tid;
    int rc = pthread_create(&tid, NULL, watch, NULL);
    if (rc != 0) {
        char why[160];
        snprintf(why, sizeof(why), "cannot start the watchdog thread (%s): a job must not run "
                 "unwatched", strerror(rc));
        dl_watchdog_abort(why);
    }
    pthread_detach(tid);
}
