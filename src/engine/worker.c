/* The worker: one backend, in a process of its own with one profile's
 * environment, serving its supervisor's requests (SV_*) over fd 3 until
 * DONE. The measurement loop runs in the supervisor; the only cross-rank
 * steps here are the backend's own init's (NCCL's unique id), relayed. */
#include "engine.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

typedef struct {
    int fd;
    int rank, nranks; /* the group's (the world's without --split) */
} wk_t;

/* Sends a request and waits for the reply of the same type. */
static dl_status_t ask(wk_t *w, uint16_t type, const void *data, uint32_t len, void *out,
                       uint32_t outlen)
{
    dl_status_t st = dl_msg_send(w->fd, type, data, len);
    dl_msg_t m;
    if (st == DL_OK)
        st = dl_msg_recv(w->fd, &m);
    if (st != DL_OK)
        return DL_ERR_COMM; /* the supervisor ended the profile */
    if (m.type != type || m.len != outlen) {
        dl_err("worker protocol: reply %u of %u bytes to request %u", m.type, m.len, type);
        dl_msg_free(&m);
        return DL_ERR_COMM;
    }
    if (outlen)
        memcpy(out, m.data, outlen);
    dl_msg_free(&m);
    return DL_OK;
}

/* A vector reduced in place by the supervisor (the reply replaces it). */
static dl_status_t in_place(void *arg, uint16_t type, void *v, size_t bytes)
{
    return ask(arg, type, v, (uint32_t)bytes, v, (uint32_t)bytes);
}

static dl_status_t x_max(void *arg, double *v, size_t n)
{
    return in_place(arg, DL_MSG_XC_MAX, v, n * sizeof(double));
}

static dl_status_t x_sum(void *arg, uint64_t *v, size_t n)
{
    return in_place(arg, DL_MSG_XC_SUM, v, n * sizeof(uint64_t));
}

static dl_status_t x_gather(void *arg, double v, double *out)
{
    wk_t *w = arg;
    uint32_t b = w->rank == 0 ? (uint32_t)(w->nranks * sizeof(double)) : 0;
    return ask(arg, DL_MSG_XC_GATHER, &v, sizeof(v), out, b);
}

/* The exchange object's bcast: rank 0's bytes, relayed through the supervisors. */
static dl_status_t x_bcast(void *arg, void *blob, size_t len)
{
    return ask(arg, DL_MSG_BCAST_ID, blob, (uint32_t)len, blob, (uint32_t)len);
}

static dl_status_t read_config(int fd, dl_wire_config_t *c, cJSON **opts)
{
    uint32_t v = DL_WIRE_VERSION;
    dl_msg_t m;
    dl_status_t st = dl_msg_send(fd, DL_MSG_HELLO, &v, sizeof(v));
    if (st == DL_OK)
        st = dl_msg_recv(fd, &m);
    if (st != DL_OK)
        return st;
    if (m.type != DL_MSG_CONFIG || m.len < sizeof(*c)) {
        dl_msg_free(&m);
        return DL_ERR_COMM;
    }
    memcpy(c, m.data, sizeof(*c));
    if (m.len != sizeof(*c) + c->opts_len) {
        dl_msg_free(&m);
        return DL_ERR_COMM;
    }
    *opts = cJSON_ParseWithLength((char *)m.data + sizeof(*c), c->opts_len);
    dl_msg_free(&m);
    return *opts ? DL_OK : DL_ERR_COMM;
}

/* CONFIG's backend, its options as the command parsed them, and whether it
 * can run here; one line naming what is missing. */
static dl_status_t backend_here(const dl_wire_config_t *c, const cJSON *opts_json,
                                const dl_backend_ops_t **be, void **opts)
{
    char why[256] = "";
    *opts = NULL;
    if (!(*be = dl_backend_find(c->backend))) {
        dl_err("rank %d: backend %s is not in this build", c->rank, c->backend);
        return DL_ERR_UNAVAILABLE;
    }
    *opts = calloc(1, (*be)->opts_size ? (*be)->opts_size : 1);
    if (!*opts || dl_opts_load_json((*be)->opts, (*be)->nopts, *opts, opts_json) != DL_OK) {
        dl_err("rank %d: the %s backend's options did not arrive whole", c->rank, (*be)->name);
        free(*opts);
        *opts = NULL;
        return DL_ERR_INTERNAL;
    }
    if ((*be)->probe(why, sizeof(why)) != DL_OK) {
        dl_err("rank %d: backend %s is not available here: %s", c->rank, (*be)->name, why);
        free(*opts);
        *opts = NULL;
        return DL_ERR_UNAVAILABLE;
    }
    return DL_OK;
}

static dl_status_t reply(wk_t *w, uint16_t type, dl_status_t st, int own, const void *p,
                         uint32_t len)
{
    int32_t h[2] = {st, own};
    return dl_msg_send2(w->fd, type, h, sizeof(h), p, len);
}

typedef struct {
    const dl_backend_ops_t *be;
    void *opts, *ctx;
    dl_inject_wrap_t iw;
    dl_xcomm_t x;
    const dl_wire_config_t *c;
    double probe_s; /* the backend's probe (for nccl: the CUDA driver's start) */
} served_t;

/* OPEN's reply: the traits the loop sizes its cases by, then the facts
 * the run record keeps (describe()'s, and where the time went). */
static dl_status_t open_reply(wk_t *w, served_t *sv, uint16_t type, double init_s)
{
    dl_backend_traits_t tr;
    dl_backend_traits(&sv->iw.ops, &sv->iw, w->nranks, &tr);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "backend", sv->be->name);
    cJSON_AddNumberToObject(o, "worker_pid", (double)getpid());
    cJSON_AddNumberToObject(o, "probe_s", sv->probe_s);
    cJSON_AddNumberToObject(o, "init_s", init_s);
    if (sv->be->describe)
        sv->be->describe(sv->ctx, o);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    size_t tl = text ? strlen(text) + 1 : 0;
    char *buf = malloc(sizeof(tr) + tl);
    dl_status_t st = DL_ERR_NOMEM;
    if (buf) {
        memcpy(buf, &tr, sizeof(tr));
        if (tl)
            memcpy(buf + sizeof(tr), text, tl);
        st = reply(w, type, DL_OK, 0, buf, (uint32_t)(sizeof(tr) + tl));
    }
    free(buf);
    free(text);
    return st;
}

static dl_status_t serve_open(wk_t *w, served_t *sv, const dl_msg_t *m)
{
    dl_wire_open_t q;
    if (m->len != sizeof(q))
        return reply(w, m->type, DL_ERR_COMM, 1, NULL, 0);
    memcpy(&q, m->data, sizeof(q));
    if (sv->ctx)
        sv->be->fini(sv->ctx);
    sv->ctx = NULL;
    w->rank = q.rank; /* the group's ranks, for the relayed steps */
    w->nranks = q.nranks;
    sv->x.rank = q.rank;
    sv->x.nranks = q.nranks;
    const dl_split_t *sl = &sv->c->split;
    dl_backend_cfg_t bc = {.rank = q.rank, .nranks = q.nranks, .local_rank = sv->c->local_rank,
                           .local_size = sv->c->local_size, .opts = sv->opts,
                           .max_bytes = q.max_bytes, .profile_name = sv->c->profile,
                           .run_dir = sv->c->run_dir, .deadline_s = q.deadline_s,
                           .xc = &sv->x, .split = sl->op != DL_SPLIT_NONE ? sl : NULL,
                           .world_rank = sv->c->rank};
    double t0 = dl_now();
    dl_status_t st = sv->be->init(&bc, &sv->ctx);
    if (st != DL_OK) {
        sv->ctx = NULL;
        return reply(w, m->type, st, 1, NULL, 0);
    }
    dl_inject_wrap(&sv->iw, &sv->c->inject, sv->be, sv->ctx, sv->c->rank, sv->c->profile);
    return open_reply(w, sv, m->type, dl_now() - t0);
}

/* RUN: the batch's total, how long after the request its last call began
 * (after any injected wait: the loop's arrivals read it), each call's time
 * when timed. */
static dl_status_t serve_run(wk_t *w, served_t *sv, const dl_wire_case_t *q)
{
    const dl_backend_ops_t *ops = &sv->iw.ops;
    double asked = dl_now();
    size_t n = 2 + (q->timed ? (size_t)q->iters : 0); /* an untimed batch: two figures */
    double *t = calloc(n, sizeof(double));
    if (!t)
        return reply(w, DL_MSG_SV_RUN, DL_ERR_NOMEM, 1, NULL, 0);
    dl_status_t st = ops->run(&sv->iw, &q->c, q->iters, q->timed ? t + 2 : NULL, t);
    t[1] = ops->entered(&sv->iw) - asked;
    st = reply(w, DL_MSG_SV_RUN, st, sv->iw.own_failure, t,
               st == DL_OK ? (uint32_t)(n * sizeof(double)) : 0);
    free(t);
    return st;
}

static dl_status_t serve_case(wk_t *w, served_t *sv, const dl_msg_t *m)
{
    dl_wire_case_t q;
    if (m->len != sizeof(q) || !sv->ctx)
        return reply(w, m->type, DL_ERR_COMM, 1, NULL, 0);
    memcpy(&q, m->data, sizeof(q));
    if (q.coll < 0 || q.coll >= DL_COLL_COUNT || q.iters < 0 || q.iters > 10000000)
        return reply(w, m->type, DL_ERR_COMM, 1, NULL, 0);
    q.c.coll = dl_colls[q.coll];
    const dl_backend_ops_t *ops = &sv->iw.ops;
    dl_status_t st;
    sv->iw.own_failure = 0;
    if (m->type == DL_MSG_SV_PREPARE) {
        st = ops->prepare(&sv->iw, &q.c);
        return reply(w, m->type, st, sv->iw.own_failure, NULL, 0);
    }
    if (m->type == DL_MSG_SV_CHECK) { /* and what the backend chose for it */
        uint64_t wrong = 0;
        dl_choice_t choice;
        memset(&choice, 0, sizeof(choice));
        st = ops->check(&sv->iw, &q.c, &wrong);
        if (st == DL_OK && ops->chose)
            ops->chose(&sv->iw, &choice);
        char a[sizeof(wrong) + sizeof(choice)];
        memcpy(a, &wrong, sizeof(wrong));
        memcpy(a + sizeof(wrong), &choice, sizeof(choice));
        return reply(w, m->type, st, sv->iw.own_failure, a, sizeof(a));
    }
    if (m->type == DL_MSG_SV_RUN)
        return serve_run(w, sv, &q);
    return reply(w, m->type, DL_ERR_COMM, 1, NULL, 0);
}

/* Serves until DONE (*done set) or the supervisor is gone. After DONE the
 * process exits next: the backend releases only what other processes wait
 * on (its end), not the whole context (fini), which the exit releases at
 * once; NCCL's full teardown held each profile's end for up to 0.5 s. */
static dl_status_t serve(wk_t *w, const dl_wire_config_t *c, const cJSON *opts_json, int *done)
{
    served_t sv = {.c = c};
    double t0 = dl_now();
    /* A backend that cannot run here says so to the first request (its
     * log has the line naming why). */
    dl_status_t bst = backend_here(c, opts_json, &sv.be, &sv.opts);
    sv.probe_s = dl_now() - t0;
    sv.x = (dl_xcomm_t){.max_doubles = x_max, .sum_u64 = x_sum, .gather_double = x_gather,
                        .bcast = x_bcast, .arg = w};
    dl_status_t st = DL_OK;
    for (;;) {
        dl_msg_t m;
        if (dl_msg_recv(w->fd, &m) != DL_OK)
            break; /* the supervisor is gone */
        if (m.type == DL_MSG_DONE) {
            dl_msg_free(&m);
            *done = 1;
            break;
        }
        if (bst != DL_OK)
            st = reply(w, m.type, bst, 1, NULL, 0);
        else if (m.type == DL_MSG_SV_OPEN)
            st = serve_open(w, &sv, &m);
        else if (m.type == DL_MSG_SV_CLOSE) {
            if (sv.ctx)
                sv.be->fini(sv.ctx);
            sv.ctx = NULL;
            st = reply(w, m.type, DL_OK, 0, NULL, 0);
        } else
            st = serve_case(w, &sv, &m);
        dl_msg_free(&m);
        if (st != DL_OK)
            break;
    }
    if (sv.ctx && !*done)
        sv.be->fini(sv.ctx);
    else if (sv.ctx && sv.be->end)
        sv.be->end(sv.ctx);
    free(sv.opts);
    return bst;
}

int dl_worker_main(int fd)
{
    /* A worker never outlives its supervisor. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        return 3;
    wk_t w = {.fd = fd};
    dl_wire_config_t c;
    cJSON *opts = NULL;
    dl_status_t st = read_config(fd, &c, &opts);
    if (st != DL_OK) {
        dl_err("worker: no configuration from the supervisor");
        cJSON_Delete(opts);
        return 3;
    }
    w.rank = c.rank;
    w.nranks = c.nranks;
    dl_info("worker rank %d/%d, profile %s, backend %s, pid %ld", c.rank, c.nranks, c.profile,
            c.backend, (long)getpid());
    int done = 0;
    st = serve(&w, &c, opts, &done);
    cJSON_Delete(opts);
    if (done) { /* nothing left to release by hand: the exit does it, now */
        fflush(NULL);
        _exit(dl_status_exit_code(st));
    }
    return dl_status_exit_code(st);
}
