/* The supervisor's side of a session (engine.h): a backend whose calls are
 * requests to a long-lived worker. */
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
    dl_session_t *s;
    const dl_xcomm_t *xc; /* the group's exchange: relayed steps go there */
} px_t;

/* A case on the wire: its collective by id (pointers never travel). */
typedef struct {
    int32_t coll, iters, timed;
    dl_case_t c;
} wire_case_t;

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
    w.serve = 1;
    return dl_config_send(s->w.fd, &w, c->be, c->be_opts, c->profile->name, c->run_dir, NULL);
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
static dl_status_t ask(px_t *p, uint16_t type, const void *a, uint32_t alen, dl_msg_t *r)
{
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
    *ctx = p;
    s->fault[0] = '\0';
    s->level = 0;
    dl_status_t st = s->alive ? DL_OK : spawn(s);
    if (st != DL_OK)
        return st;
    struct {
        int32_t rank, nranks;
        uint64_t max_bytes;
        double deadline_s;
    } req = {cfg->rank, cfg->nranks, cfg->max_bytes, s->cfg.timeout_s};
    dl_msg_t r;
    st = ask(p, DL_MSG_SV_OPEN, &req, sizeof(req), &r);
    if (st == DL_OK && r.len > 8) {
        free(s->info);
        s->info = strdup((char *)r.data + 8);
    }
    dl_msg_free(&r);
    return st;
}

static dl_status_t ask_case(void *ctx, uint16_t type, const dl_case_t *c, int iters, int timed,
                            dl_msg_t *r)
{
    wire_case_t w = {.coll = c->coll->id, .iters = iters, .timed = timed, .c = *c};
    w.c.coll = NULL;
    return ask(ctx, type, &w, sizeof(w), r);
}

static dl_status_t px_prepare(void *ctx, const dl_case_t *c)
{
    dl_msg_t r;
    dl_status_t st = ask_case(ctx, DL_MSG_SV_PREPARE, c, 0, 0, &r);
    dl_msg_free(&r);
    return st;
}

static dl_status_t px_run(void *ctx, const dl_case_t *c, int iters, double *times, double *total)
{
    dl_msg_t r;
    dl_status_t st = ask_case(ctx, DL_MSG_SV_RUN, c, iters, times != NULL, &r);
    size_t need = 8 + sizeof(double) * (1 + (times ? (size_t)iters : 0));
    if (st == DL_OK && r.len != need)
        st = DL_ERR_COMM;
    if (st == DL_OK) {
        memcpy(total, (char *)r.data + 8, sizeof(double));
        if (times)
            memcpy(times, (char *)r.data + 16, (size_t)iters * sizeof(double));
    }
    dl_msg_free(&r);
    return st;
}

static dl_status_t px_check(void *ctx, const dl_case_t *c, uint64_t *wrong)
{
    dl_msg_t r;
    dl_status_t st = ask_case(ctx, DL_MSG_SV_CHECK, c, 0, 0, &r);
    if (st == DL_OK && r.len == 16)
        memcpy(wrong, (char *)r.data + 8, 8);
    else if (st == DL_OK)
        st = DL_ERR_COMM;
    dl_msg_free(&r);
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

/* Its traits are the served backend's: the worker sends them with OPEN's reply. */
const dl_backend_ops_t dl_session_ops = {
    .name = "session", .probe = px_probe, .init = px_init,
    .prepare = px_prepare, .run = px_run, .check = px_check, .fini = px_fini,
};
