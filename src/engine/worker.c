/* The worker: one backend measuring one profile, in a process of its own.
 * Every cross-rank step goes to the supervisor over fd 3; the measurement
 * loop is src/measure's, unchanged. */
#include "engine.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

typedef struct {
    int fd;
    int rank, nranks; /* the group's (the world's without --split) */
    int world_rank;   /* who sends the results */
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

static dl_status_t x_all_max(void *arg, double *v, size_t n)
{
    return in_place(arg, DL_MSG_XC_ALL_MAX, v, n * sizeof(double));
}

static dl_status_t x_all_sum(void *arg, uint64_t *v, size_t n)
{
    return in_place(arg, DL_MSG_XC_ALL_SUM, v, n * sizeof(uint64_t));
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

/* The record goes whole (dl_result_pack); only rank 0 holds the gathered figures. */
static dl_status_t send_result(void *arg, dl_result_t *r)
{
    wk_t *w = arg;
    if (w->world_rank != 0) /* with --split, every group's record is here too */
        return DL_OK;
    void *buf = NULL;
    uint32_t len = 0;
    dl_status_t st = dl_result_pack(r, &buf, &len);
    if (st == DL_OK)
        st = dl_msg_send(w->fd, DL_MSG_RESULT, buf, len);
    free(buf);
    return st;
}

static dl_status_t read_config(int fd, dl_wire_config_t *c, uint64_t **sizes, cJSON **opts)
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
    size_t sz = (size_t)c->nwords * sizeof(uint64_t);
    if (m.len != sizeof(*c) + sz + c->opts_len) {
        dl_msg_free(&m);
        return DL_ERR_COMM;
    }
    *sizes = malloc(sz + sizeof(uint64_t));
    if (*sizes)
        memcpy(*sizes, (char *)m.data + sizeof(*c), sz);
    *opts = cJSON_ParseWithLength((char *)m.data + sizeof(*c) + sz, c->opts_len);
    dl_msg_free(&m);
    return *sizes && *opts ? DL_OK : DL_ERR_COMM;
}

static void send_info(wk_t *w, const dl_backend_ops_t *be, void *ctx, double probe_s,
                      double init_s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "backend", be->name);
    cJSON_AddNumberToObject(o, "worker_pid", (double)getpid());
    cJSON_AddNumberToObject(o, "probe_s", probe_s); /* for nccl: the CUDA driver's start */
    cJSON_AddNumberToObject(o, "init_s", init_s);
    if (be->describe)
        be->describe(ctx, o);
    char *s = cJSON_PrintUnformatted(o);
    dl_msg_send(w->fd, DL_MSG_INFO, s, (uint32_t)strlen(s));
    free(s);
    cJSON_Delete(o);
}

static void send_end(wk_t *w, dl_status_t st, int own)
{
    if (st == DL_OK) {
        int32_t s = DL_OK;
        dl_msg_send(w->fd, DL_MSG_DONE, &s, sizeof(s));
        return;
    }
    char buf[300];
    int32_t h[2] = {st, own};
    memcpy(buf, h, 8);
    int n = snprintf(buf + 8, sizeof(buf) - 8, "%s%s", dl_status_str(st),
                     own ? "" : " (a peer failed)");
    dl_msg_send(w->fd, DL_MSG_ERROR, buf, (uint32_t)(8 + n));
}

/* CONFIG's backend, its options as the command parsed them, and whether it
 * can run here; one line naming what is missing. Both modes start so. */
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

static dl_status_t measure(wk_t *w, const dl_wire_config_t *c, const uint64_t *sizes,
                           const cJSON *opts_json, int *own, int *ended)
{
    *own = 1;
    const dl_backend_ops_t *be;
    void *opts;
    double t0 = dl_now();
    dl_status_t bst = backend_here(c, opts_json, &be, &opts);
    if (bst != DL_OK)
        return bst;
    /* --split: the backend on the group's ranks, the relayed steps the
     * group's (the supervisor's group communicator), the loop's lockstep
     * over every group (x.all). */
    const dl_split_t *sl = &c->mo.split;
    int split = sl->op != DL_SPLIT_NONE;
    w->world_rank = c->rank;
    if (split) {
        w->rank = dl_split_rank(sl, c->rank);
        w->nranks = sl->size;
    }
    dl_xcomm_t xa = {.max_doubles = x_all_max, .sum_u64 = x_all_sum, .arg = w,
                     .rank = c->rank, .nranks = c->nranks};
    dl_xcomm_t x = {.max_doubles = x_max, .sum_u64 = x_sum, .gather_double = x_gather,
                    .bcast = x_bcast, .arg = w, .rank = w->rank, .nranks = w->nranks,
                    .all = split ? &xa : NULL, .group = split ? dl_split_group(sl, c->rank) : 0,
                    .groups = sl->groups > 0 ? sl->groups : 1};
    dl_backend_cfg_t bc = {.rank = w->rank, .nranks = w->nranks, .local_rank = c->local_rank,
                           .local_size = c->local_size, .opts = opts,
                           .profile_name = c->profile, .run_dir = c->run_dir,
                           .deadline_s = c->deadline_s, .xc = &x,
                           .split = split ? sl : NULL, .world_rank = c->rank};
    dl_plan_t plan = {.kind = (dl_plan_kind_t)c->kind, .places = c->places, .root = c->root,
                      .mo = c->mo};
    if (plan.kind == DL_PLAN_SWEEP) {
        plan.sweep.colls = c->colls;
        plan.sweep.dtypes = c->dtypes;
        plan.sweep.ops = c->ops;
    }
    dl_plan_store_t store;
    if (dl_plan_unpack(&plan, sizes, c->nwords, &store) != DL_OK) {
        dl_err("rank %d: the plan did not arrive whole", c->rank);
        dl_plan_store_free(&store);
        free(opts);
        return DL_ERR_COMM;
    }
    bc.max_bytes = dl_plan_max_bytes(&plan);
    void *ctx = NULL;
    double t1 = dl_now();
    dl_status_t st = be->init(&bc, &ctx);
    if (st != DL_OK) {
        dl_plan_store_free(&store);
        free(opts);
        return st;
    }
    send_info(w, be, ctx, t1 - t0, dl_now() - t1);
    dl_inject_wrap_t iw;
    dl_inject_wrap(&iw, &c->inject, be, ctx, c->rank, c->profile);
    st = dl_plan_run(&plan, &iw.ops, &iw, &x, send_result, w);
    *own = iw.own_failure;
    /* The profile ends with its last row: the supervisor hears so before
     * the teardown (NCCL's takes up to 0.5 s, its proxy thread's poll),
     * which its exit_s then holds. */
    send_end(w, st, *own);
    *ended = 1;
    be->fini(ctx);
    dl_plan_store_free(&store);
    free(opts);
    return st;
}

/* ---- serving a session (engine.h): requests until DONE ---- */

typedef struct {
    int32_t coll, iters, timed;
    dl_case_t c;
} wire_case_t;

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
} served_t;

static dl_status_t serve_open(wk_t *w, served_t *sv, const dl_msg_t *m)
{
    struct {
        int32_t rank, nranks;
        uint64_t max_bytes;
        double deadline_s;
    } q;
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
    /* The backend gives up a little after the supervisor would call this
     * worker hung: a peer's worker that waits on a hung one answers in time. */
    dl_backend_cfg_t bc = {.rank = q.rank, .nranks = q.nranks, .local_rank = sv->c->local_rank,
                           .local_size = sv->c->local_size, .opts = sv->opts,
                           .max_bytes = q.max_bytes, .profile_name = sv->c->profile,
                           .run_dir = sv->c->run_dir, .deadline_s = q.deadline_s * 0.8,
                           .xc = &sv->x};
    dl_status_t st = sv->be->init(&bc, &sv->ctx);
    if (st != DL_OK) {
        sv->ctx = NULL;
        return reply(w, m->type, st, 1, NULL, 0);
    }
    dl_inject_wrap(&sv->iw, &sv->c->inject, sv->be, sv->ctx, sv->c->rank, sv->c->profile);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "backend", sv->be->name);
    if (sv->be->describe)
        sv->be->describe(sv->ctx, o);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    st = reply(w, m->type, DL_OK, 0, text, text ? (uint32_t)strlen(text) + 1 : 0);
    free(text);
    return st;
}

static dl_status_t serve_case(wk_t *w, served_t *sv, const dl_msg_t *m)
{
    wire_case_t q;
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
    if (m->type == DL_MSG_SV_CHECK) {
        uint64_t wrong = 0;
        st = ops->check(&sv->iw, &q.c, &wrong);
        return reply(w, m->type, st, sv->iw.own_failure, &wrong, sizeof(wrong));
    }
    double *t = calloc((size_t)q.iters + 1, sizeof(double));
    if (!t)
        return reply(w, m->type, DL_ERR_NOMEM, 1, NULL, 0);
    st = ops->run(&sv->iw, &q.c, q.iters, q.timed ? t + 1 : NULL, t);
    uint32_t n = (uint32_t)(sizeof(double) * (1 + (q.timed ? (size_t)q.iters : 0)));
    st = reply(w, m->type, st, sv->iw.own_failure, t, st == DL_OK ? n : 0);
    free(t);
    return st;
}

static dl_status_t serve(wk_t *w, const dl_wire_config_t *c, const cJSON *opts_json)
{
    served_t sv = {.c = c};
    if (backend_here(c, opts_json, &sv.be, &sv.opts) != DL_OK)
        return DL_ERR_UNAVAILABLE;
    sv.x = (dl_xcomm_t){.max_doubles = x_max, .sum_u64 = x_sum, .gather_double = x_gather,
                        .bcast = x_bcast, .arg = w};
    dl_status_t st = DL_OK;
    for (;;) {
        dl_msg_t m;
        if (dl_msg_recv(w->fd, &m) != DL_OK)
            break; /* the supervisor is gone */
        if (m.type == DL_MSG_DONE) {
            dl_msg_free(&m);
            break;
        }
        if (m.type == DL_MSG_SV_OPEN)
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
    if (sv.ctx)
        sv.be->fini(sv.ctx);
    free(sv.opts);
    return DL_OK;
}

int dl_worker_main(int fd)
{
    /* A worker never outlives its supervisor. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        return 3;
    wk_t w = {.fd = fd};
    dl_wire_config_t c;
    uint64_t *sizes = NULL;
    cJSON *opts = NULL;
    dl_status_t st = read_config(fd, &c, &sizes, &opts);
    if (st != DL_OK) {
        dl_err("worker: no configuration from the supervisor");
        free(sizes);
        cJSON_Delete(opts);
        return 3;
    }
    w.rank = c.rank;
    w.nranks = c.nranks;
    dl_info("worker rank %d/%d, profile %s, backend %s, pid %ld", c.rank, c.nranks, c.profile,
            c.backend, (long)getpid());
    int own = 1;
    if (c.serve) {
        st = serve(&w, &c, opts);
        free(sizes);
        cJSON_Delete(opts);
        return dl_status_exit_code(st);
    }
    int ended = 0; /* measure said DONE or ERROR itself, before its teardown */
    st = measure(&w, &c, sizes, opts, &own, &ended);
    if (!ended)
        send_end(&w, st, own);
    free(sizes);
    cJSON_Delete(opts);
    return dl_status_exit_code(st);
}
