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
dl_ev_t dl_sv_wait(dl_sv_run_t *r, MPI_Request *req, dl_msg_t *m)
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
        /* MPI steps are short: spin first, then sleep in poll (which a
         * worker's message ends at once). */
        if (req && spins < 2000)
            sched_yield();
        else
            poll(&pfd, 1, req ? 1 : 20);
    }
}

/* After a peer's abort, the worker may still be about to answer (its own
 * error): a moment to hear it. EV_MSG with the answer, or EV_ABORT. */
static dl_ev_t abort_grace(dl_sv_run_t *r, uint16_t type, dl_msg_t *m)
{
    struct pollfd pfd = {.fd = r->w.fd, .events = POLLIN};
    double end = dl_now() + 0.5;
    while (dl_now() < end) {
        int pr = poll(&pfd, 1, 50);
        if (pr > 0) {
            dl_ev_t ev = read_msg(r, m);
            if (ev == EV_MSG && m->type == type)
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

static dl_status_t send_config(dl_sv_run_t *r)
{
    const dl_engine_cfg_t *c = &r->e->cfg;
    dl_wire_config_t w;
    memset(&w, 0, sizeof(w));
    if (c->inject)
        w.inject = *c->inject;
    w.split = c->split;
    w.rank = c->rank;
    w.nranks = c->nranks;
    w.local_rank = c->local_rank;
    w.local_size = c->local_size;
    return dl_config_send(r->w.fd, &w, c->be, c->be_opts, r->p->name, c->run_dir);
}

/* One relayed step of the backend's own init (NCCL's unique id): the MPI
 * operation it asked for, on the group's communicator. */
static dl_ev_t relay(dl_sv_run_t *r, dl_msg_t *m)
{
    MPI_Request req;
    void *reply = m->data, *gathered = NULL;
    uint32_t rlen = m->len;
    int rc;
    switch (m->type) {
    case DL_MSG_XC_MAX:
        rc = MPI_Iallreduce(MPI_IN_PLACE, m->data, (int)(m->len / sizeof(double)), MPI_DOUBLE,
                            MPI_MAX, r->group, &req);
        break;
    case DL_MSG_XC_SUM:
        rc = MPI_Iallreduce(MPI_IN_PLACE, m->data, (int)(m->len / sizeof(uint64_t)),
                            MPI_UINT64_T, MPI_SUM, r->group, &req);
        break;
    case DL_MSG_XC_GATHER:
        if (r->grank == 0 && !(gathered = calloc((size_t)r->gsize, sizeof(double))))
            dl_watchdog_abort("out of memory (gathering the ranks' figures)");
        reply = gathered;
        rlen = r->grank == 0 ? (uint32_t)(r->gsize * sizeof(double)) : 0;
        rc = MPI_Igather(m->data, 1, MPI_DOUBLE, gathered, 1, MPI_DOUBLE, 0, r->group, &req);
        break;
    default: /* DL_MSG_BCAST_ID */
        rc = MPI_Ibcast(m->data, (int)m->len, MPI_BYTE, 0, r->group, &req);
        break;
    }
    if (rc != MPI_SUCCESS) {
        free(gathered);
        return EV_BAD;
    }
    dl_msg_t stray;
    dl_ev_t ev = dl_sv_wait(r, &req, &stray);
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

/* A reply that says the worker's backend failed: on its own account
 * (error; timeout when it gave up at its own deadline, hung as surely as
 * one the supervisor had to kill) or because a peer did. */
static void reply_failed(dl_sv_run_t *r, dl_status_t st, int own)
{
    if (r->me.kind != DL_RK_OK)
        return; /* the first failure is the one to tell */
    dl_rank_kind_t k = !own ? DL_RK_ERROR_PEER : st == DL_ERR_TIMEOUT ? DL_RK_TIMEOUT : DL_RK_ERROR;
    char last[200];
    dl_worker_last_error(r->w.log, 0, last, sizeof(last));
    /* The worker's own words, less the "rank N: " the record already has. */
    const char *said = last;
    if (strncmp(said, "rank ", 5) == 0 && strstr(said, ": "))
        said = strstr(said, ": ") + 2;
    if (own && said[0])
        dl_outcome_set(r, k, st, "%s", said);
    else
        dl_outcome_set(r, k, st, "%s%s", dl_status_str(st), own ? "" : " (a peer failed)");
}

void dl_sv_fail(dl_sv_run_t *r, dl_ev_t ev, dl_msg_t *m)
{
    double t = r->e->cfg.timeout_s;
    r->over = 1;
    switch (ev) {
    case EV_EOF:
        dl_outcome_set(r, DL_RK_CRASHED, DL_ERR_CRASH, "the worker died");
        break;
    case EV_TIMEOUT: {
        /* It may have said why in its log while still aborting. */
        char last[200];
        dl_worker_last_error(r->w.log, 1, last, sizeof(last));
        dl_outcome_set(r, DL_RK_TIMEOUT, DL_ERR_TIMEOUT,
                       "the worker sent nothing for %.0f s (hung)%s%s", t,
                       last[0] ? "; its last words: " : "", last);
        break;
    }
    case EV_ABORT:
        dl_outcome_set(r, DL_RK_PEER, DL_ERR_COMM, "ended because a peer failed");
        break;
    case EV_SIGNAL:
        dl_outcome_set(r, DL_RK_INTERRUPTED, DL_ERR_INTERNAL, "interrupted by %s",
                       dl_lw_signame(g_interrupted));
        break;
    case EV_MSG:
        dl_outcome_set(r, DL_RK_ERROR, DL_ERR_COMM, "unexpected message type %u from the worker",
                       m ? m->type : 0);
        break;
    default:
        dl_outcome_set(r, DL_RK_ERROR, DL_ERR_COMM, "the worker broke the protocol");
    }
}

/* The reply's status; a failure it reports becomes this rank's outcome. */
static dl_status_t reply_status(dl_sv_run_t *r, const dl_msg_t *m)
{
    int32_t h[2] = {DL_ERR_COMM, 1};
    if (m->len >= 8)
        memcpy(h, m->data, 8);
    if (h[0] != DL_OK)
        reply_failed(r, (dl_status_t)h[0], h[1]);
    return (dl_status_t)h[0];
}

/* A relayed init step asked for while a request is pending; 0 when served. */
static int serve_relay(dl_sv_run_t *r, dl_msg_t *m)
{
    dl_ev_t ev = relay(r, m);
    if (ev == EV_REQ_DONE)
        return 0;
    if (ev == EV_TIMEOUT) {
        r->over = 1;
        dl_outcome_set(r, DL_RK_TIMEOUT_WAIT, DL_ERR_TIMEOUT,
                       "no progress for %.0f s while waiting on peers", r->e->cfg.timeout_s);
    } else {
        dl_sv_fail(r, ev, NULL);
    }
    return 1;
}

/* One request of the remote backend (remote.h's ask), its reply awaited
 * with the worker, the peers' aborts and the deadline watched. */
static dl_status_t sv_ask(void *arg, uint16_t type, const void *a, uint32_t alen, dl_msg_t *rep)
{
    dl_sv_run_t *r = arg;
    memset(rep, 0, sizeof(*rep));
    if (r->over)
        return DL_ERR_COMM;
    r->deadline = dl_now() + r->e->cfg.timeout_s;
    if (dl_msg_send(r->w.fd, type, a, alen) != DL_OK) {
        dl_sv_fail(r, EV_EOF, NULL);
        return DL_ERR_CRASH;
    }
    for (;;) {
        dl_ev_t ev = dl_sv_wait(r, NULL, rep);
        int aborted = ev == EV_ABORT;
        if (aborted)
            ev = abort_grace(r, type, rep);
        if (ev == EV_MSG && rep->type == type && !aborted)
            return reply_status(r, rep);
        if (ev == EV_MSG && rep->type == type) { /* a peer has left: so does this rank */
            dl_status_t st = reply_status(r, rep);
            if (st == DL_OK)
                dl_sv_fail(r, EV_ABORT, NULL);
            r->over = 1;
            return st != DL_OK ? st : DL_ERR_COMM;
        }
        int lost = 1;
        if (ev == EV_MSG && rep->type >= DL_MSG_BCAST_ID && rep->type <= DL_MSG_XC_GATHER)
            lost = serve_relay(r, rep);
        else
            dl_sv_fail(r, ev, rep);
        dl_msg_free(rep);
        if (lost)
            return r->me.status != DL_OK ? (dl_status_t)r->me.status : DL_ERR_COMM;
    }
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
    const dl_split_t *sl = &e->cfg.split;
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
    if (st != DL_OK) {
        r->over = 1;
        dl_outcome_set(r, DL_RK_ERROR, st, "cannot start the worker");
    }
    return st;
}

/* HELLO, then CONFIG. */
static dl_status_t handshake(dl_sv_run_t *r)
{
    dl_msg_t m = {0};
    dl_ev_t ev = dl_sv_wait(r, NULL, &m);
    dl_status_t st = DL_OK;
    if (ev != EV_MSG || m.type != DL_MSG_HELLO) {
        dl_sv_fail(r, ev, &m);
        st = DL_ERR_COMM;
    } else if (m.len < 4 || *(uint32_t *)m.data != DL_WIRE_VERSION) {
        r->over = 1;
        dl_outcome_set(r, DL_RK_ERROR, DL_ERR_INTERNAL, "worker protocol version mismatch");
        st = DL_ERR_INTERNAL;
    } else if (send_config(r) != DL_OK) {
        dl_sv_fail(r, EV_EOF, NULL);
        st = DL_ERR_CRASH;
    }
    dl_msg_free(&m);
    return st;
}

/* The backend opened in the worker (its init's relayed steps served), its
 * facts kept for the record. */
static dl_status_t open_backend(dl_sv_run_t *r)
{
    const dl_engine_cfg_t *c = &r->e->cfg;
    r->rm = (dl_remote_t){.ask = sv_ask, .arg = r};
    dl_wire_open_t q = {r->grank, r->gsize, c->max_bytes, backend_deadline(c->timeout_s)};
    char *info = NULL;
    dl_status_t st = dl_remote_open(&r->rm, &q, &info);
    if (st == DL_OK)
        r->t_ready = dl_now();
    cJSON *facts = info ? cJSON_Parse(info) : NULL;
    free(info);
    if (facts && r->prof_json)
        cJSON_AddItemToObject(r->prof_json, "backend_info", facts);
    else
        cJSON_Delete(facts);
    dl_remote_ops(&r->ops, c->be);
    dl_sv_exchange_init(r);
    return st;
}

dl_status_t dl_engine_profile_begin(dl_engine_t *e, const dl_profile_t *p, cJSON *prof_json,
                                    dl_engine_prof_t **out)
{
    dl_sv_run_t *r = calloc(1, sizeof(*r));
    if (!r)
        dl_watchdog_abort("out of memory (a profile's run)");
    r->e = e;
    r->p = p;
    r->prof_json = prof_json;
    r->w.fd = -1;
    *out = r;
    dl_status_t st = start(r);
    if (st == DL_OK)
        st = handshake(r);
    if (st == DL_OK)
        st = open_backend(r);
    return st;
}

const dl_backend_ops_t *dl_engine_profile_ops(dl_engine_prof_t *r, void **ctx,
                                              const dl_xcomm_t **x)
{
    *ctx = &r->rm;
    *x = &r->x;
    return &r->ops;
}

/* How the loop ended here; a worker that did its part is told it is done. */
static void loop_ended(dl_sv_run_t *r, dl_status_t st)
{
    if (st != DL_OK && r->me.kind == DL_RK_OK) /* the agreement said a peer failed */
        dl_outcome_set(r, DL_RK_ERROR_PEER, st, "%s (a peer failed)", dl_status_str(st));
    if (r->me.kind != DL_RK_OK)
        return;
    dl_outcome_set(r, DL_RK_OK, DL_OK, "ok");
    r->t_done = dl_now();
    r->done = dl_msg_send(r->w.fd, DL_MSG_DONE, NULL, 0) == DL_OK;
}

static dl_prof_status_t agree_outcome(dl_sv_run_t *r)
{
    dl_engine_t *e = r->e;
    dl_rank_outcome_t *all = calloc((size_t)e->cfg.nranks, sizeof(*all));
    if (!all)
        dl_watchdog_abort("out of memory (the ranks' outcomes of a profile)");
    if (dl_outcome_agree(r, all) != 0) {
        e->broken = 1;
        for (int i = 0; i < e->cfg.nranks; i++)
            all[i] = i == e->cfg.rank ? r->me
                     : (dl_rank_outcome_t){.kind = DL_RK_INTERRUPTED,
                                           .reason = "no answer from its supervisor"};
    }
    dl_prof_status_t ps = dl_outcome_record(r, all);
    free(all);
    return ps;
}

dl_status_t dl_engine_profile_end(dl_engine_prof_t *r, dl_status_t st, dl_prof_status_t *pst)
{
    loop_ended(r, st);
    /* A worker that failed because a peer did is no news to that peer. */
    if (r->me.kind != DL_RK_OK && r->me.kind != DL_RK_PEER && r->me.kind != DL_RK_ERROR_PEER)
        dl_outcome_notify_peers(r);
    end_worker(r);
    add_timing(r);
    if (!r->got_abort) {
        MPI_Cancel(&r->abort_req);
        MPI_Wait(&r->abort_req, MPI_STATUS_IGNORE);
    }
    cJSON *observed = NULL;
    if (r->me.kind == DL_RK_OK)
        observed = dl_observe_transports(r, r->me.transports, sizeof(r->me.transports));
    if (observed && r->prof_json)
        cJSON_AddItemToObject(r->prof_json, "observed_transports", observed);
    else
        cJSON_Delete(observed);
    *pst = agree_outcome(r);
    /* A failed profile may leave a step pending on its communicator: it is
     * abandoned, never freed, so nothing waits on it. */
    if (*pst == DL_PROF_OK && r->group != MPI_COMM_NULL && r->group != r->relay)
        MPI_Comm_free(&r->group);
    if (*pst == DL_PROF_OK && r->relay != MPI_COMM_NULL)
        MPI_Comm_free(&r->relay);
    dl_prof_status_t ps = *pst;
    free(r);
    if (ps == DL_PROF_OK)
        return DL_OK;
    return ps == DL_PROF_TIMEOUT ? DL_ERR_TIMEOUT
           : ps == DL_PROF_CRASHED ? DL_ERR_CRASH
           : ps == DL_PROF_INTERRUPTED ? DL_ERR_INTERNAL : DL_ERR_COMM;
}
