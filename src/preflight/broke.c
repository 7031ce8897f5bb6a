/* A step that makes no progress (a peer hung, a link dead) must not hold a
 * Slurm prolog forever: past the timeout the job is aborted with exit 3, and
 * rank 0 leaves a JSON document that says which step broke. A signal
 * (SIGINT, SIGTERM, or dlcomm launch's SIGUSR2) ends it the same way, the
 * document saying which: the main thread may sit in a collective. */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../engine/engine.h"
#include "../sys/lastwords.h"
#include "../sys/launch.h"
#include "../sys/watchdog.h"

static double g_timeout;
static int g_rank;
static char g_json[1024], g_prom[1024];

/* Who ends the run, under g_end_lock: 1 the main thread (its verdict), 2 the
 * watchdog (a signal). */
static pthread_mutex_t g_end_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_ended;

int pf_watchdog_final(void)
{
    pthread_mutex_lock(&g_end_lock);
    int mine = g_ended == 0;
    if (mine)
        g_ended = 1;
    pthread_mutex_unlock(&g_end_lock);
    if (mine)
        pf_step("done");
    return mine;
}

void pf_step(const char *what) { dl_watchdog_step(what); }

/* sig: 0 for a timeout, else the signal that stopped it. */
static void write_broke(const char *step, int sig)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "schema", 1);
    cJSON_AddStringToObject(d, "command", "preflight");
    cJSON *v = cJSON_AddObjectToObject(d, "verdict");
    cJSON_AddStringToObject(v, "status", "broke");
    cJSON_AddStringToObject(v, "step", step);
    if (sig)
        cJSON_AddStringToObject(v, "interrupted_by", dl_lw_signame(sig));
    else
        cJSON_AddNumberToObject(v, "timeout_s", g_timeout);
    cJSON_AddNumberToObject(d, "exit_code", 3);
    char *s = g_json[0] ? cJSON_Print(d) : NULL;
    if (s)
        dl_write_atomic(g_json, s, strlen(s));
    cJSON_free(s);
    if (g_prom[0]) /* the metrics say it broke, not last week's verdict */
        dl_pf_prometheus(g_prom, d);
    cJSON_Delete(d);
}

/* The watchdog's verdict: the step that broke, on stdout and in the JSON
 * document; rank 0 writes first, the others wait before the abort. */
static double on_expire(void *arg, dl_wd_why_t why, int sig, const char *step)
{
    (void)arg;
    if (why == DL_WD_SIGNAL) {
        /* Every check ran, the verdict is being written: a signal now (mpirun
         * ending the job as a rank returns 1) must not overwrite it. */
        pthread_mutex_lock(&g_end_lock);
        int verdict = g_ended == 1;
        if (!verdict)
            g_ended = 2;
        pthread_mutex_unlock(&g_end_lock);
        if (verdict)
            return -1;
        sig = dl_launch_stop_cause(sig);
        if (g_rank == 0)
            dl_err("interrupted by %s during %s (exit 3)", dl_lw_signame(sig), step);
    } else {
        sig = 0;
        dl_err("rank %d: %s made no progress for %.0f s: a peer is hung or a link is dead; "
               "aborting (exit 3)", g_rank, step, g_timeout);
    }
    if (g_rank == 0) {
        if (sig)
            printf("VERDICT BROKE %s interrupted by %s\n", step, dl_lw_signame(sig));
        else
            printf("VERDICT BROKE %s timed out after %.0f s\n", step, g_timeout);
        fflush(stdout);
        if (g_json[0] || g_prom[0])
            write_broke(step, sig);
        return 0;
    }
    return sig ? 0.5 : 2.0; /* rank 0 writes the JSON first; the abort kills it */
}

void pf_watchdog_start(pf_ctx_t *c, const char *json_path)
{
    g_timeout = c->o->timeout_s;
    g_rank = c->rank;
    snprintf(g_json, sizeof(g_json), "%s", json_path ? json_path : "");
    snprintf(g_prom, sizeof(g_prom), "%s", c->rank == 0 && c->o->prom_path ? c->o->prom_path : "");
    dl_watchdog_cfg_t wc = {.timeout_s = g_timeout, .fail_grace_s = 1e30,
                            .signalled = dl_engine_interrupted, .on_expire = on_expire};
    dl_watchdog_start(&wc);
}
