/* Running a plan: in the ranks (one implicit profile, the one watchdog) or
 * in workers (every profile in fresh processes, the engine's supervision).
 * Either way the measurement loop runs here, in the ranks; in workers it
 * reaches the backend through the engine's remote wrapper. */
#include "job.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../results/results.h"
#include "../sys/launch.h"
#include "../sys/lastwords.h"
#include "../sys/sys.h"
#include "../sys/watchdog.h"

typedef struct {
    dl_job_t *j;
    const dl_sink_t *s;
} run_t;

/* The record is shared with the thread that answers SIGINT/SIGTERM
 * (on_interrupt): a row is added, or the record written, whole. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_final; /* the plan is over: a late signal changes nothing */

static dl_status_t on_result(void *arg, dl_result_t *r)
{
    run_t *x = arg;
    pthread_mutex_lock(&g_lock);
    dl_watchdog_step(NULL);
    x->j->wrong += r->wrong;
    r->shared_gpu = x->j->per_gpu > 1 ? x->j->per_gpu : 0;
    dl_status_t st = x->s->result ? x->s->result(x->s->arg, r) : DL_OK;
    pthread_mutex_unlock(&g_lock);
    return st;
}

/* ---- in the ranks: a case that does not finish in time aborts the job ---- */

static int g_rank;

/* When this rank's collective failed, its peers sit inside the collective
 * and would wait out --timeout: give the agreement a moment, then end the
 * job (rank 0 has written every finished collective). */
#define DL_FAILURE_GRACE_S 3.0
#define DL_RECORD_WAIT_S 0.9

static void on_local_failure(dl_status_t st)
{
    (void)st;
    dl_watchdog_failed();
}

static double on_deadline(void *arg, dl_wd_why_t why, int sig, const char *step)
{
    (void)arg; (void)sig; (void)step;
    if (why == DL_WD_FAILED) {
        dl_err("rank %d: its collective failed (above) and the peers cannot finish theirs; "
               "ending the job", g_rank);
        dl_lw_note(DL_LW_FAILED);
    } else {
        dl_err("rank %d: no progress for %.0f s (timeout): a peer is hung or gone; aborting",
               g_rank, dl_watchdog_timeout());
        dl_lw_note(DL_LW_TIMEOUT);
    }
    return 0;
}

/* SIGINT/SIGTERM while the ranks themselves measure (mpi): the main thread
 * may sit in a collective that never returns, so this thread answers.
 * Open MPI 4.1's mpirun, signalled, sends the ranks SIGCONT, then SIGTERM a
 * second later, then SIGKILL a second after that: rank 0's sink keeps what
 * is done within that second, every rank exits 3. */
static void on_interrupt(int sig, void *arg)
{
    run_t *x = arg;
    pthread_mutex_lock(&g_lock);
    if (g_final) { /* measured to the end: the run finishes as it would */
        pthread_mutex_unlock(&g_lock);
        return;
    }
    if (x->j->rank == 0) {
        if (x->s->interrupted)
            x->s->interrupted(x->s->arg, x->j, dl_launch_stop_cause(sig));
        dl_lw_recorded();
    } else {
        dl_lw_wait_recorded(DL_RECORD_WAIT_S);
    }
    fflush(NULL);
    dl_launch_note(3);
    _exit(3);
}

/* The exchange of a run in the ranks; --split: the backend and the loop's
 * figures on the group's own communicator, the loop's agreements over the
 * world (x->all). */
static dl_status_t xcomm_open(const dl_split_t *sl, int rank, MPI_Comm *world, MPI_Comm *group,
                              dl_xcomm_t *x, dl_xcomm_t *xa)
{
    *group = MPI_COMM_NULL;
    dl_xcomm_mpi_init(xa, world);
    if (sl->op != DL_SPLIT_NONE &&
        MPI_Comm_split(*world, dl_split_group(sl, rank), rank, group) != MPI_SUCCESS)
        return DL_ERR_COMM;
    dl_xcomm_mpi_init(x, *group != MPI_COMM_NULL ? group : world);
    if (*group != MPI_COMM_NULL) {
        x->all = xa;
        x->group = dl_split_group(sl, rank);
        x->groups = sl->groups;
    }
    x->local_failure = on_local_failure;
    return DL_OK;
}

/* The one implicit profile of a backend that runs in the ranks (mpi): the
 * same fault-injection wrapper as in a worker. */
static dl_status_t run_inprocess(run_t *rx, const dl_plan_t *plan)
{
    dl_job_t *j = rx->j;
    const dl_backend_ops_t *be = j->be;
    MPI_Comm world = MPI_COMM_WORLD, group;
    const dl_split_t *sl = &plan->mo.split;
    dl_xcomm_t x, xa;
    if (xcomm_open(sl, j->rank, &world, &group, &x, &xa) != DL_OK)
        return DL_ERR_COMM;
    cJSON *pj = j->rank == 0 && rx->s->profile ? rx->s->profile(rx->s->arg, j, NULL, be->name, NULL)
                                               : NULL;
    dl_backend_cfg_t cfg = {.rank = x.rank, .nranks = x.nranks, .local_rank = j->local_rank,
                            .local_size = j->local_size, .opts = j->be_opts, .xc = &x,
                            .profile_name = be->name, .deadline_s = j->cfg.o->timeout,
                            .split = x.all ? sl : NULL, .world_rank = j->rank};
    void *ctx = NULL;
    dl_status_t st = be->init(&cfg, &ctx);
    g_rank = j->rank;
    dl_watchdog_cfg_t wc = {.timeout_s = j->cfg.o->timeout, .fail_grace_s = DL_FAILURE_GRACE_S,
                            .on_expire = on_deadline};
    dl_watchdog_start(&wc);
    if (st == DL_OK && be->describe && pj) /* as a worker's INFO record */
        be->describe(ctx, cJSON_AddObjectToObject(pj, "backend_info"));
    dl_inject_wrap_t iw;
    dl_inject_wrap(&iw, j->cfg.inject, be, ctx, j->rank, NULL);
    if (dl_lw_on_interrupt(on_interrupt, rx) != DL_OK) /* said: an interrupt would lose the rows */
        dl_watchdog_abort(NULL);
    if (st == DL_OK)
        st = dl_plan_run(plan, &iw.ops, &iw, &x, on_result, rx);
    pthread_mutex_lock(&g_lock);
    g_final = 1;
    pthread_mutex_unlock(&g_lock);
    dl_watchdog_idle(); /* every rank agreed: the run ends normally */
    if (ctx)
        be->fini(ctx);
    if (group != MPI_COMM_NULL)
        MPI_Comm_free(&group);
    return st;
}

/* One profile in workers, as run_inprocess runs the one in the ranks: its
 * backend opened (in its workers), the plan run over it, how it ended
 * agreed; the sink hears how it ended. */
static dl_status_t run_profile(run_t *rx, dl_engine_t *e, const dl_profile_t *p,
                               const dl_plan_t *plan)
{
    dl_job_t *j = rx->j;
    const dl_sink_t *s = rx->s;
    char why[160], label[128];
    /* A model's node count decides for a model (the system it is given). */
    const char *skip = dl_profile_skip_reason(p, j->setup.nodes > 0 ? j->setup.nodes : j->nodes,
                                              why, sizeof(why));
    snprintf(label, sizeof(label), "%s%s", p->name, j->modelled ? " (modelled)" : "");
    cJSON *pj = j->rank == 0 && s->profile ? s->profile(s->arg, j, p, label, skip) : NULL;
    if (skip) {
        if (j->rank == 0)
            dl_info("profile %s skipped: %s", p->name, skip);
        return DL_OK;
    }
    uint64_t wrong_before = j->wrong;
    dl_prof_status_t ps;
    dl_engine_prof_t *pr;
    dl_status_t st = dl_engine_profile_begin(e, p, pj, &pr);
    if (st == DL_OK) {
        void *ctx;
        const dl_xcomm_t *x;
        const dl_backend_ops_t *ops = dl_engine_profile_ops(pr, &ctx, &x);
        st = dl_plan_run(plan, ops, ctx, x, on_result, rx);
    }
    st = dl_engine_profile_end(pr, st, &ps);
    dl_progress_end();
    if (j->rank == 0 && s->profile_end)
        s->profile_end(s->arg, j, ps != DL_PROF_OK                ? DL_REC_UNKNOWN
                       : j->wrong > wrong_before ? DL_REC_WRONG
                                                 : DL_REC_OK,
                       NULL);
    if (ps == DL_PROF_INTERRUPTED || dl_engine_broken(e))
        j->stop = 1;
    return st;
}

/* Every profile in worker processes, one after the other; a failed one is
 * recorded and the next runs. */
static dl_status_t run_workers(run_t *rx, const dl_plan_t *plan)
{
    dl_job_t *j = rx->j;
    dl_engine_cfg_t ec = {.be = j->be, .be_opts = j->be_opts, .inject = j->cfg.inject,
                          .timeout_s = j->cfg.o->timeout, .run_dir = j->dir,
                          .world = MPI_COMM_WORLD, .rank = j->rank, .nranks = j->nranks,
                          .local_rank = j->local_rank, .local_size = j->local_size,
                          .nodes = j->nodes, .split = plan->mo.split,
                          .max_bytes = dl_plan_max_bytes(plan)};
    dl_engine_t *e = NULL;
    dl_status_t worst = dl_engine_open(&ec, &e);
    if (worst != DL_OK)
        return worst;
    dl_engine_signals_install();
    int i;
    for (i = 0; i < j->nprofiles && !j->stop; i++)
        worst = dl_status_worse(worst, run_profile(rx, e, &j->profiles[i], plan));
    for (; j->rank == 0 && rx->s->profile && i < j->nprofiles; i++) /* what never ran */
        rx->s->profile(rx->s->arg, j, &j->profiles[i], j->profiles[i].name,
                       "not run: the sweep stopped before it");
    if (!dl_engine_broken(e)) /* every rank counted the same sum; rank 0's is the record's */
        MPI_Bcast(&j->wrong, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    else
        j->stop = 2;
    dl_engine_close(e);
    return worst;
}

dl_status_t dl_job_run(dl_job_t *j, const dl_plan_t *plan, const dl_sink_t *s)
{
    run_t rx = {.j = j, .s = s};
    dl_status_t st = DL_OK;
    if (j->rank == 0 && s->begin)
        st = s->begin(s->arg, j);
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (st != DL_OK)
        return st;
    st = j->workers ? run_workers(&rx, plan) : run_inprocess(&rx, plan);
    dl_progress_end();
    j->sig = dl_launch_stop_cause(dl_engine_interrupted());
    if (!j->workers && j->rank == 0 && s->profile_end) { /* a worker's profile has its own */
        dl_status_t pst = st == DL_OK && j->wrong ? DL_ERR_CHECK : st;
        s->profile_end(s->arg, j, pst == DL_OK           ? DL_REC_OK
                       : pst == DL_ERR_CHECK ? DL_REC_WRONG
                                             : DL_REC_ERROR,
                       pst == DL_OK || pst == DL_ERR_CHECK ? NULL : dl_status_str(pst));
    }
    return st;
}
