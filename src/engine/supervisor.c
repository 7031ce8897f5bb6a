/* The supervisor's side of one profile: start the worker, answer its
 * relay requests with non-blocking MPI while watching it, end it. */
#include "supervisor.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sys/lastwords.h"
#include "../sys/watchdog.h"

#define KILL_GRACE_S 2.0
/* After DONE the worker tears its backend down (nccl: a finalize bounded at
 * 10 s, then an abort) and exits. */
#define EXIT_GRACE_S 15.0
#define PEER_GRACE_S 2.0

static volatile sig_atomic_t g_interrupted;

static void on_signal(int sig)
{
    g_interrupted = sig;
    dl_lw_note(sig); /* rank 0 tells a signal from a kill */
}

void dl_engine_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: poll() returns at once */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(DL_LW_STOP_SIGNAL, &sa, NULL); /* dlcomm launch's way of saying stop */
    signal(SIGPIPE, SIG_IGN);
}

int dl_engine_interrupted(void) { return g_interrupted; }

dl_status_t dl_engine_open(const dl_engine_cfg_t *cfg, dl_engine_t **out)
{
    dl_engine_t *e = calloc(1, sizeof(*e));
    if (!e)
        return DL_ERR_NOMEM;
    e->cfg = *cfg;
    if (MPI_Comm_dup(cfg->world, &e->ctl) != MPI_SUCCESS) {
        free(e);
        return DL_ERR_COMM;
    }
    *out = e;
    return DL_OK;
}

int dl_engine_broken(const dl_engine_t *e) { return e->broken; }

void dl_engine_close(dl_engine_t *e)
{
    if (!e)
        return;
    if (!e->broken)
        MPI_Comm_free(&e->ctl);
    free(e);
}

typedef enum { EV_MSG, EV_REQ_DONE, EV_EOF, EV_TIMEOUT, EV_ABORT, EV_SIGNAL, EV_BAD } dl_ev_t;

/* Waits for whichever comes first: a message from the worker, the MPI
 * request (if any), a peer's abort, a signal, the deadline. */
static dl_ev_t read_msg(dl_sv_run_t *r, dl_msg_t *m)
{
    dl_status_t st = dl_msg_recv(r->w.fd, m);
    if (st == DL_ERR_CRASH)
        return EV_EOF;
    if (st != DL_OK)
        return EV_BAD;
    r->deadline = dl_now() + r->e->cfg.timeout_s;
    return EV_MSG;
}

/* Waits for whichever comes first: a message from the worker (looked at
 * first: its own report beats a peer's abort), the MPI request (if any), a
 * peer's abort, a signal, the deadline. */
static dl_ev_t wait_event(dl_sv_run_t *r, MPI_Request *req, dl_msg_t *m)
{
    for (int spins = 0;; spins++) {
        int flag = 0;
        if (g_interrupted)
            return EV_SIGNAL;
        struct pollfd pfd = {.fd = r->w.fd, .events = POLLIN};
        int pr = poll(&pfd, 1, 0);
        if (pr > 0)
            return read_msg(r, m);
        if (pr < 0 && errno != EINTR)
            return EV_EOF;
        if (req) {
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
            if (flag)
                return EV_REQ_DONE;
        }
        if (!r->got_abort) {
            MPI_Test(&r->abort_req, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                r->got_abort = 1;
                return EV_ABORT;
            }
        }
        /* Waiting on peers, a rank gives the peer whose own worker is
         * silent time to say so first: the report then names the right rank. */
        if (dl_now() > r->deadline + (req ? PEER_GRACE_S : 0))
            return EV_TIMEOUT;
        /* Relay steps are short: spin first, then sleep in poll. */
        if (req && spins < 2000)
            sched_yield();
        else
            poll(&pfd, 1, req ? 1 : 20);
    }
}

/* After a peer's abort, the worker may still be about to say why it
 * stopped (its own error): a moment to hear it. */
static dl_ev_t abort_grace(dl_sv_run_t *r, dl_msg_t *m)
{
    struct pollfd pfd = {.fd = r->w.fd, .events = POLLIN};
    double end = dl_now() + 0.5;
    while (dl_now() < end) {
        int pr = poll(&pfd, 1, 50);
        if (pr > 0) {
            dl_ev_t ev = read_msg(r, m);
            if (ev == EV_MSG && (m->type == DL_MSG_ERROR || m->type == DL_MSG_DONE))
                return ev;
            dl_msg_free(m);
            return EV_ABORT;
        }
    }
    return EV_ABORT;
}

/* The backend's own deadline comes first, with room for its abort (NCCL's
 * takes up to half a second) and for saying why before the supervisor's
 * --timeout runs out: a tenth of it, at least 2 s, at most half. */
static double backend_deadline(double timeout_s)
{
    double margin = timeout_s * 0.1 > 2 ? timeout_s * 0.1 : 2;
    if (margin > timeout_s * 0.5)
        margin = timeout_s * 0.5;
    return timeout_s - margin;
}

static void send_config(dl_sv_run_t *r)
{
    const dl_engine_cfg_t *c = &r->e->cfg;
    const dl_plan_t *p = c->plan;
    dl_wire_config_t w;
    memset(&w, 0, sizeof(w));
    if (c->inject)
        w.inject = *c->inject;
    w.deadline_s = backend_deadline(c->timeout_s);
    w.rank = c->rank;
    w.nranks = c->nranks;
    w.local_rank = c->local_rank;
    w.local_size = c->local_size;
    dl_config_send(r->w.fd, &w, c->be, c->be_opts, r->p->name, c->run_dir, p);
}

/* One relay step: the MPI operation the worker's loop asked for. */
static dl_ev_t relay(dl_sv_run_t *r, dl_msg_t *m)
{
    MPI_Request req;
    void *reply = m->data, *gathered = NULL;
    uint32_t rlen = m->len;
    int rc;
    /* The steps are the group's (--split), the ALL ones every group's. */
    MPI_Comm comm = m->type == DL_MSG_XC_ALL_MAX || m->type == DL_MSG_XC_ALL_SUM ? r->relay
                                                                                : r->group;
    switch (m->type) {
    case DL_MSG_XC_MAX: case DL_MSG_XC_ALL_MAX:
        rc = MPI_Iallreduce(MPI_IN_PLACE, m->data, (int)(m->len / sizeof(double)), MPI_DOUBLE,
                            MPI_MAX, comm, &req);
        break;
    case DL_MSG_XC_SUM: case DL_MSG_XC_ALL_SUM:
        rc = MPI_Iallreduce(MPI_IN_PLACE, m->data, (int)(m->len / sizeof(uint64_t)),
                            MPI_UINT64_T, MPI_SUM, comm, &req);
        break;
    case DL_MSG_XC_GATHER:
        if (r->grank == 0 && !(gathered = calloc((size_t)r->gsize, sizeof(double))))
            dl_watchdog_abort("out of memory (gathering the ranks' figures)");
        reply = gathered;
        rlen = r->grank == 0 ? (uint32_t)(r->gsize * sizeof(double)) : 0;
        rc = MPI_Igather(m->data, 1, MPI_DOUBLE, gathered, 1, MPI_DOUBLE, 0, comm, &req);
        break;
    default: /* DL_MSG_BCAST_ID */
        rc = MPI_Ibcast(m->data, (int)m->len, MPI_BYTE, 0, comm, &req);
        break;
    }
    if (rc != MPI_SUCCESS) {
        free(gathered);
        return EV_BAD;
    }
    dl_msg_t stray;
    dl_ev_t ev = wait_event(r, &req, &stray);
    if (ev == EV_REQ_DONE)
        dl_msg_send(r->w.fd, m->type, reply, rlen);
    if (ev == EV_MSG) { /* a worker waiting for a reply sends nothing */
        dl_msg_free(&stray);
        ev = EV_BAD;
    }
    if (ev == EV_REQ_DONE)
        free(gathered);
    else /* an abandoned request may still write its buffers: they are leaked */
        m->data = NULL;
    return ev;
}

static void on_error_msg(dl_sv_run_t *r, const dl_msg_t *m)
{
    int32_t st = DL_ERR_INTERNAL, own = 1;
    if (m->len >= 8) {
        memcpy(&st, m->data, 4);
        memcpy(&own, (char *)m->data + 4, 4);
    }
    const char *text = m->len > 8 ? (const char *)m->data + 8 : dl_status_str((dl_status_t)st);
    /* A backend that gave up at its own deadline (nccl aborts its
     * communicator) hung as surely as one the supervisor had to kill. */
    dl_rank_kind_t k = !own ? DL_RK_ERROR_PEER : st == DL_ERR_TIMEOUT ? DL_RK_TIMEOUT : DL_RK_ERROR;
    char last[200];
    dl_worker_last_error(r->w.log, 0, last, sizeof(last));
    /* The worker's own words, less the "rank N: " the record already has. */
    const char *said = last;
    if (strncmp(said, "rank ", 5) == 0 && strstr(said, ": "))
        said = strstr(said, ": ") + 2;
    if (own && said[0])
        dl_outcome_set(r, k, (dl_status_t)st, "%s", said);
    else
        dl_outcome_set(r, k, (dl_status_t)st, "%s", text);
}

/* Handles one event outside a relay step; 1 when the profile is over here. */
static int handle(dl_sv_run_t *r, dl_ev_t ev, dl_msg_t *m)
{
    double t = r->e->cfg.timeout_s;
    switch (ev) {
    case EV_MSG: break;
    case EV_EOF:
        dl_outcome_set(r, DL_RK_CRASHED, DL_ERR_CRASH, "the worker died");
        return 1;
    case EV_TIMEOUT: {
        /* It may have said why in its log while still aborting. */
        char last[200];
        dl_worker_last_error(r->w.log, 1, last, sizeof(last));
        dl_outcome_set(r, DL_RK_TIMEOUT, DL_ERR_TIMEOUT,
                       "the worker sent nothing for %.0f s (hung)%s%s", t,
                       last[0] ? "; its last words: " : "", last);
        return 1;
    }
    case EV_ABORT: {
        dl_msg_t own;
        if (abort_grace(r, &own) == EV_MSG) {
            int over = handle(r, EV_MSG, &own);
            dl_msg_free(&own);
            return over;
        }
        dl_outcome_set(r, DL_RK_PEER, DL_ERR_COMM, "ended because a peer failed");
        return 1;
    }
    case EV_SIGNAL:
        dl_outcome_set(r, DL_RK_INTERRUPTED, DL_ERR_INTERNAL, "interrupted by %s",
                       dl_lw_signame(g_interrupted));
        return 1;
    default:
        dl_outcome_set(r, DL_RK_ERROR, DL_ERR_COMM, "the worker broke the protocol");
        return 1;
    }
    int over = 0;
    switch (m->type) {
    case DL_MSG_HELLO:
        if (m->len < 4 || *(uint32_t *)m->data != DL_WIRE_VERSION) {
            dl_outcome_set(r, DL_RK_ERROR, DL_ERR_INTERNAL, "worker protocol version mismatch");
            over = 1;
        } else {
            send_config(r);
        }
        break;
    case DL_MSG_INFO:
        r->t_ready = dl_now();
        dl_sv_on_info(r, m);
        break;
    case DL_MSG_RESULT: dl_sv_on_result(r, m); break;
    case DL_MSG_DONE:
        r->t_done = dl_now();
        r->done = 1;
        dl_outcome_set(r, DL_RK_OK, DL_OK, "ok");
        over = 1;
        break;
    case DL_MSG_ERROR:
        on_error_msg(r, m);
        over = 1;
        break;
    case DL_MSG_BCAST_ID: case DL_MSG_XC_MAX: case DL_MSG_XC_SUM: case DL_MSG_XC_GATHER:
    case DL_MSG_XC_ALL_MAX: case DL_MSG_XC_ALL_SUM:
        ev = relay(r, m);
        if (ev == EV_TIMEOUT)
            dl_outcome_set(r, DL_RK_TIMEOUT_WAIT, DL_ERR_TIMEOUT,
                           "no progress for %.0f s while waiting on peers", t);
        else if (ev != EV_REQ_DONE)
            over = handle(r, ev, NULL);
        over |= ev != EV_REQ_DONE;
        break;
    default:
        dl_outcome_set(r, DL_RK_ERROR, DL_ERR_COMM, "unknown message type %u", m->type);
        over = 1;
    }
    return over;
}

static void end_worker(dl_sv_run_t *r)
{
    if (r->done && dl_worker_wait_exit(&r->w, EXIT_GRACE_S) == DL_OK) {
        dl_worker_end(&r->w, 0);
        return;
    }
    dl_worker_end(&r->w, KILL_GRACE_S);
    if (r->me.kind == DL_RK_CRASHED) {
        char how[128], last[100];
        dl_worker_describe_exit(&r->w, how, sizeof(how));
        dl_worker_last_error(r->w.log, 0, last, sizeof(last));
        char host[64] = "";
        gethostname(host, sizeof(host) - 1);
        dl_outcome_set(r, DL_RK_CRASHED, DL_ERR_CRASH, "the worker (host %s, pid %d) %s%s%s", host,
                       (int)r->w.pid, how, last[0] ? "; its last words: " : "", last);
    }
}

/* Where a profile's time went: starting the worker and its backend (for
 * nccl: CUDA context, communicator); its cases and the backend's teardown,
 * until it said done; its exit; all of it. */
static void add_timing(dl_sv_run_t *r)
{
    if (!r->prof_json || r->t_start <= 0)
        return;
    double end = dl_now();
    cJSON *o = cJSON_AddObjectToObject(r->prof_json, "timing");
    if (r->t_ready > 0)
        cJSON_AddNumberToObject(o, "startup_s", r->t_ready - r->t_start);
    if (r->t_ready > 0 && r->t_done > 0)
        cJSON_AddNumberToObject(o, "run_s", r->t_done - r->t_ready);
    if (r->t_done > 0)
        cJSON_AddNumberToObject(o, "exit_s", end - r->t_done);
    cJSON_AddNumberToObject(o, "total_s", end - r->t_start);
}

static dl_status_t start(dl_sv_run_t *r)
{
    dl_engine_t *e = r->e;
    r->abort_tag = 100 + e->seq++ % 30000;
    r->relay = r->group = MPI_COMM_NULL;
    if (MPI_Comm_dup(e->cfg.world, &r->relay) != MPI_SUCCESS)
        return DL_ERR_COMM;
    const dl_split_t *sl = &e->cfg.plan->mo.split;
    r->group = r->relay;
    if (sl->op != DL_SPLIT_NONE &&
        MPI_Comm_split(r->relay, dl_split_group(sl, e->cfg.rank), e->cfg.rank, &r->group) !=
            MPI_SUCCESS)
        return DL_ERR_COMM;
    MPI_Comm_rank(r->group, &r->grank);
    MPI_Comm_size(r->group, &r->gsize);
    MPI_Irecv(&r->abort_buf, 1, MPI_INT, MPI_ANY_SOURCE, r->abort_tag, e->ctl, &r->abort_req);
    r->deadline = dl_now() + e->cfg.timeout_s;
    r->t_start = dl_now();
    dl_status_t st = dl_worker_spawn(r->p, e->cfg.run_dir, e->cfg.rank, &r->w);
    if (st != DL_OK)
        dl_outcome_set(r, DL_RK_ERROR, st, "cannot start the worker");
    return st;
}

dl_status_t dl_engine_run_profile(dl_engine_t *e, const dl_profile_t *p, cJSON *prof_json,
                                  dl_prof_status_t *pst)
{
    dl_sv_run_t r;
    memset(&r, 0, sizeof(r));
    r.e = e;
    r.p = p;
    r.prof_json = prof_json;
    r.w.fd = -1;
    if (start(&r) == DL_OK) {
        for (int over = 0; !over;) {
            dl_msg_t m = {0};
            dl_ev_t ev = wait_event(&r, NULL, &m);
            over = handle(&r, ev, &m);
            dl_msg_free(&m);
        }
    }
    /* A worker that failed because a peer did is no news to that peer. */
    if (r.me.kind != DL_RK_OK && r.me.kind != DL_RK_PEER && r.me.kind != DL_RK_ERROR_PEER)
        dl_outcome_notify_peers(&r);
    end_worker(&r);
    add_timing(&r);
    if (!r.got_abort) {
        MPI_Cancel(&r.abort_req);
        MPI_Wait(&r.abort_req, MPI_STATUS_IGNORE);
    }
    cJSON *observed = NULL;
    if (r.me.kind == DL_RK_OK)
        observed = dl_observe_transports(&r, r.me.transports, sizeof(r.me.transports));
    if (observed && prof_json)
        cJSON_AddItemToObject(prof_json, "observed_transports", observed);
    else
        cJSON_Delete(observed);
    dl_rank_outcome_t *all = calloc((size_t)e->cfg.nranks, sizeof(*all));
    if (!all)
        dl_watchdog_abort("out of memory (the ranks' outcomes of a profile)");
    if (dl_outcome_agree(&r, all) != 0) {
        e->broken = 1;
        for (int i = 0; i < e->cfg.nranks; i++)
            all[i] = i == e->cfg.rank ? r.me
                     : (dl_rank_outcome_t){.kind = DL_RK_INTERRUPTED,
                                           .reason = "no answer from its supervisor"};
    }
    *pst = dl_outcome_record(&r, all);
    free(all);
    /* A failed profile may leave a relay step pending on its communicator:
     * it is abandoned, never freed, so nothing waits on it. */
    if (*pst == DL_PROF_OK && r.group != MPI_COMM_NULL && r.group != r.relay)
        MPI_Comm_free(&r.group);
    if (*pst == DL_PROF_OK && r.relay != MPI_COMM_NULL)
        MPI_Comm_free(&r.relay);
    if (*pst == DL_PROF_OK)
        return DL_OK;
    return *pst == DL_PROF_TIMEOUT ? DL_ERR_TIMEOUT
           : *pst == DL_PROF_CRASHED ? DL_ERR_CRASH
           : *pst == DL_PROF_INTERRUPTED ? DL_ERR_INTERNAL : DL_ERR_COMM;
}
