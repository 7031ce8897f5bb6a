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
    int rank, nranks;
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

static dl_status_t x_max(void *arg, double *v, size_t n)
{
    uint32_t b = (uint32_t)(n * sizeof(double));
    return ask(arg, DL_MSG_XC_MAX, v, b, v, b);
}

static dl_status_t x_sum(void *arg, uint64_t *v, size_t n)
{
    uint32_t b = (uint32_t)(n * sizeof(uint64_t));
    return ask(arg, DL_MSG_XC_SUM, v, b, v, b);
}

static dl_status_t x_gather(void *arg, double v, double *out)
{
    wk_t *w = arg;
    uint32_t b = w->rank == 0 ? (uint32_t)(w->nranks * sizeof(double)) : 0;
    return ask(arg, DL_MSG_XC_GATHER, &v, sizeof(v), out, b);
}

/* dl_backend_cfg_t.bcast_id: the root's blob, relayed through the supervisors. */
static dl_status_t bcast_id(void *arg, void *blob, size_t len)
{
    return ask(arg, DL_MSG_BCAST_ID, blob, (uint32_t)len, blob, (uint32_t)len);
}

static dl_status_t send_result(void *arg, dl_result_t *r)
{
    wk_t *w = arg;
    if (w->rank != 0) /* rank 0 holds the gathered figures */
        return DL_OK;
    dl_wire_result_t x;
    memset(&x, 0, sizeof(x));
    x.coll = r->c.coll->id;
    x.dtype = r->c.dtype;
    x.op = r->c.op;
    x.place = r->c.place;
    x.root = r->c.root;
    x.nranks = r->nranks;
    x.converged = r->converged;
    x.status = r->status;
    x.bytes_requested = r->c.bytes_requested;
    x.wrong = r->wrong;
    x.counts = r->c.counts;
    x.t = r->t;
    x.avg_s = r->avg_s;
    x.algbw_gbps = r->algbw_gbps;
    x.busbw_gbps = r->busbw_gbps;
    x.setup_s = r->setup_s;
    x.timed_s = r->timed_s;
    x.arrays = r->wrong_per_rank && r->rank_mean_s;
    size_t n = x.arrays ? (size_t)r->nranks : 0;
    char *arr = malloc(n * 16 + 1);
    if (n) {
        memcpy(arr, r->wrong_per_rank, n * 8);
        memcpy(arr + n * 8, r->rank_mean_s, n * 8);
    }
    dl_status_t st = dl_msg_send2(w->fd, DL_MSG_RESULT, &x, sizeof(x), arr, (uint32_t)(n * 16));
    free(arr);
    return st;
}

static dl_status_t read_config(int fd, dl_wire_config_t *c, uint64_t **sizes)
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
    if (m.len != sizeof(*c) + c->nsizes * sizeof(uint64_t)) {
        dl_msg_free(&m);
        return DL_ERR_COMM;
    }
    *sizes = malloc((c->nsizes + 1) * sizeof(uint64_t));
    memcpy(*sizes, (char *)m.data + sizeof(*c), c->nsizes * sizeof(uint64_t));
    dl_msg_free(&m);
    return DL_OK;
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

static dl_status_t measure(wk_t *w, const dl_wire_config_t *c, const uint64_t *sizes, int *own)
{
    *own = 1;
    const dl_backend_ops_t *be = dl_backend_find(c->backend);
    char why[256] = "";
    if (!be) {
        dl_err("rank %d: backend %s is not in this build", c->rank, c->backend);
        return DL_ERR_UNAVAILABLE;
    }
    double t0 = dl_now();
    if (be->probe(why, sizeof(why)) != DL_OK) {
        dl_err("rank %d: backend %s is not available here: %s", c->rank, be->name, why);
        return DL_ERR_UNAVAILABLE;
    }
    dl_backend_cfg_t bc = {.rank = c->rank, .nranks = c->nranks, .local_rank = c->local_rank,
                           .local_size = c->local_size, .system_path = c->system_path,
                           .sim_nodes = c->sim_nodes, .graph_iters = c->graph_iters,
                           .profile_name = c->profile, .run_dir = c->run_dir,
                           .deadline_s = c->deadline_s, .bcast_id = bcast_id, .bcast_arg = w};
    for (size_t i = 0; i < c->nsizes; i++)
        if (sizes[i] > bc.max_bytes)
            bc.max_bytes = sizes[i];
    void *ctx = NULL;
    double t1 = dl_now();
    dl_status_t st = be->init(&bc, &ctx);
    if (st != DL_OK)
        return st;
    send_info(w, be, ctx, t1 - t0, dl_now() - t1);
    dl_inject_wrap_t iw;
    st = dl_engine_inject_wrap(&iw, be, ctx, c->rank, c->profile);
    dl_plan_t plan = {.colls = c->colls, .dtypes = c->dtypes, .ops = c->ops, .places = c->places,
                      .sizes = sizes, .nsizes = c->nsizes, .root = c->root,
                      .mo = c->mo};
    dl_xcomm_t x = {.max_doubles = x_max, .sum_u64 = x_sum, .gather_double = x_gather,
                    .arg = w, .rank = c->rank, .nranks = c->nranks};
    if (st == DL_OK)
        st = dl_plan_run(&plan, &iw.ops, &iw, &x, send_result, w);
    *own = iw.own_failure;
    be->fini(ctx);
    return st;
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
    dl_status_t st = read_config(fd, &c, &sizes);
    if (st != DL_OK) {
        dl_err("worker: no configuration from the supervisor");
        return 3;
    }
    w.rank = c.rank;
    w.nranks = c.nranks;
    dl_info("worker rank %d/%d, profile %s, backend %s, pid %ld", c.rank, c.nranks, c.profile,
            c.backend, (long)getpid());
    int own = 1;
    st = measure(&w, &c, sizes, &own);
    send_end(&w, st, own);
    free(sizes);
    return dl_status_exit_code(st);
}
