/* The supervisor's side of a session (engine.h): a backend whose calls are
 * requests to a long-lived worker. */
#include "remote.h"
#include "supervisor.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

struct dl_session {
    dl_session_cfg_t cfg;
    dl_worker_t w;
    int alive;
    int level; /* how its last call failed on its own account: 0 no, 1 gave up at its
                  deadline (waiting on a peer, maybe), 2 its call failed, 3 hung or died */
    char fault[300];
    char *info;
};

typedef struct {
    dl_remote_t rm;       /* first: the calls' ctx (remote.c) */
    dl_session_t *s;
    const dl_xcomm_t *xc; /* the group's exchange: relayed steps go there */
} px_t;

static void kill_worker(dl_session_t *s)
{
    if (s->alive)
        dl_worker_end(&s->w, 1.0);
    s->alive = 0;
}

static dl_status_t spawn(dl_session_t *s)
{
    const dl_session_cfg_t *c = &s->cfg;
    dl_status_t st = dl_worker_spawn(c->profile, c->run_dir, c->rank, &s->w);
    if (st != DL_OK)
        return st;
    s->alive = 1;
    dl_msg_t m;
    st = dl_msg_recv(s->w.fd, &m);
    int ok = st == DL_OK && m.type == DL_MSG_HELLO && m.len >= 4 &&
             *(uint32_t *)m.data == DL_WIRE_VERSION;
    if (st == DL_OK)
        dl_msg_free(&m);
    if (!ok) {
        kill_worker(s);
        s->level = 3;
        snprintf(s->fault, sizeof(s->fault), "crashed: the worker did not start (see %.200s)", s->w.log);
        return DL_ERR_CRASH;
    }
    dl_wire_config_t w;
    memset(&w, 0, sizeof(w));
    if (c->inject)
        w.inject = *c->inject;
    w.rank = c->rank;
    w.nranks = c->nranks;
    w.local_rank = c->local_rank;
    w.local_size = c->local_size;
    return dl_config_send(s->w.fd, &w, c->be, c->be_opts, c->profile->name, c->run_dir);
}

dl_status_t dl_session_open(const dl_session_cfg_t *cfg, dl_session_t **out)
{
    dl_session_t *s = calloc(1, sizeof(*s));
    if (!s)
        return DL_ERR_NOMEM;
    s->cfg = *cfg;
    s->w.fd = -1;
    char dir[2048];
    snprintf(dir, sizeof(dir), "%s/workers", cfg->run_dir);
    dl_status_t st = dl_dir_private(dir, NULL); /* this run's, or the caller's own */
    if (st != DL_OK) {
        free(s);
        return st;
    }
    *out = s;
    return DL_OK;
}

void dl_session_close(dl_session_t *s)
{
    if (!s)
        return;
    if (s->alive) {
        dl_msg_send(s->w.fd, DL_MSG_DONE, NULL, 0);
        if (dl_worker_wait_exit(&s->w, 5.0) != DL_OK)
            kill_worker(s);
        dl_worker_end(&s->w, 0);
    }
    free(s->info);
    free(s);
}

const char *dl_session_fault(const dl_session_t *s, int *level)
{
    if (level)
        *level = s->fault[0] ? s->level : 0;
    return s->fault;
}
const char *dl_session_info(const dl_session_t *s) { return s->info; }

/* A relayed step of the worker's backend (its bootstrap id, say), done on
 * the group's exchange. */
static dl_status_t relay(px_t *p, dl_msg_t *m)
{
    const dl_xcomm_t *x = p->xc;
    uint32_t rlen = m->len;
    void *reply = m->data, *gathered = NULL;
    dl_status_t st;
    switch (m->type) {
    case DL_MSG_XC_MAX: st = x->max_doubles(x->arg, m->data, m->len / sizeof(double)); break;
    case DL_MSG_XC_SUM: st = x->sum_u64(x->arg, m->data, m->len / sizeof(uint64_t)); break;
    case DL_MSG_XC_GATHER:
        gathered = x->rank == 0 ? calloc((size_t)x->nranks, sizeof(double)) : NULL;
        st = x->gather_double(x->arg, *(double *)m->data, gathered);
        reply = gathered;
        rlen = x->rank == 0 ? (uint32_t)(x->nranks * sizeof(double)) : 0;
        break;
    default: st = x->bcast(x->arg, m->data, m->len); break;
    }
    if (st == DL_OK)
        st = dl_msg_send(p->s->w.fd, m->type, reply, rlen);
    free(gathered);
    return st;
}

/* One request, its reply (status and own checked, payload left in *r), the
 * worker watched meanwhile. */
static dl_status_t ask(void *arg, uint16_t type, const void *a, uint32_t alen, dl_msg_t *r)
{
    px_t *p = arg;
    dl_session_t *s = p->s;
    memset(r, 0, sizeof(*r));
    if (!s->alive)
        return DL_ERR_CRASH;
    dl_status_t st = dl_msg_send2(s->w.fd, type, a, alen, NULL, 0);
    double deadline = dl_now() + s->cfg.timeout_s;
    while (st == DL_OK) {
        struct pollfd pfd = {.fd = s->w.fd, .events = POLLIN};
        int left = (int)((deadline - dl_now()) * 1000);
        int pr = left > 0 ? poll(&pfd, 1, left > 100 ? 100 : left) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0 && dl_now() < deadline)
            continue;
        if (pr == 0) {
            char last[200];
            dl_worker_last_error(s->w.log, 1, last, sizeof(last));
            kill_worker(s);
            s->level = 3;
            snprintf(s->fault, sizeof(s->fault), "hung: the worker gave no answer for %.0f s%s%s",
                     s->cfg.timeout_s, last[0] ? "; its last words: " : "", last);
            return DL_ERR_TIMEOUT;
        }
        st = dl_msg_recv(s->w.fd, r);
        if (st != DL_OK)
            break;
        if (r->type == type)
            break;
        if (r->type >= DL_MSG_BCAST_ID && r->type <= DL_MSG_XC_GATHER) {
            st = relay(p, r);
            dl_msg_free(r);
            deadline = dl_now() + s->cfg.timeout_s;
            continue;
        }
        dl_msg_free(r);
        st = DL_ERR_COMM;
    }
    if (st != DL_OK) {
        char how[128], last[150];
        dl_worker_end(&s->w, 1.0);
        s->alive = 0;
        s->level = 3;
        dl_worker_describe_exit(&s->w, how, sizeof(how));
        dl_worker_last_error(s->w.log, 0, last, sizeof(last));
        snprintf(s->fault, sizeof(s->fault), "crashed: the worker %.100s%s%.150s", how,
                 last[0] ? "; its last words: " : "", last);
        return DL_ERR_CRASH;
    }
    int32_t h[2] = {DL_ERR_COMM, 1};
    if (r->len >= 8)
        memcpy(h, r->data, 8);
    if (h[0] != DL_OK && h[1]) {
        char last[200];
        dl_worker_last_error(s->w.log, 1, last, sizeof(last));
        s->level = h[0] == DL_ERR_TIMEOUT ? 1 : 2;
        snprintf(s->fault, sizeof(s->fault), "%s: %s", h[0] == DL_ERR_TIMEOUT ? "gave up" : "error",
                 last[0] ? last : dl_status_str(h[0]));
    }
    return (dl_status_t)h[0];
}

static dl_status_t px_probe(char *why, size_t len) { (void)why; (void)len; return DL_OK; }

static dl_status_t px_init(const dl_backend_cfg_t *cfg, void **ctx)
{
    dl_session_t *s = (dl_session_t *)cfg->opts;
    px_t *p = calloc(1, sizeof(*p));
    if (!p)
        return DL_ERR_NOMEM;
    p->s = s;
    p->xc = cfg->xc;
    p->rm.ask = ask;
    p->rm.arg = p;
    *ctx = p;
    s->fault[0] = '\0';
    s->level = 0;
    dl_status_t st = s->alive ? DL_OK : spawn(s);
    if (st != DL_OK)
        return st;
    /* The backend gives up a little after the supervisor would call this
     * worker hung: a peer's worker that waits on a hung one answers in time. */
    dl_wire_open_t q = {cfg->rank, cfg->nranks, cfg->max_bytes, s->cfg.timeout_s * 0.8};
    char *info = NULL;
    st = dl_remote_open(&p->rm, &q, &info);
    if (info) {
        free(s->info);
        s->info = info;
    }
    return st;
}

static void px_fini(void *ctx)
{
    px_t *p = ctx;
    if (!p)
        return;
    dl_msg_t r;
    if (p->s->alive) {
        char keep[sizeof(p->s->fault)];
        memcpy(keep, p->s->fault, sizeof(keep)); /* a close says nothing new */
        ask(p, DL_MSG_SV_CLOSE, NULL, 0, &r);
        dl_msg_free(&r);
        memcpy(p->s->fault, keep, sizeof(keep));
    }
    free(p);
}

/* The calls are remote.c's, as the engine's; a session answers no traits
 * (preflight sizes its cases by its own ranks). */
const dl_backend_ops_t dl_session_ops = {
    .name = "session", .probe = px_probe, .init = px_init,
    .prepare = dl_remote_prepare, .run = dl_remote_run, .check = dl_remote_check,
    .fini = px_fini,
};
