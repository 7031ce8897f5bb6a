/* The mpi backend: the supervisors themselves, host buffers, MPI
 * collectives, MPI_Wtime. float16, bfloat16 and fp8 have no MPI type: they
 * travel as opaque contiguous types reduced by user ops (so their speed is
 * that of a user op, not of the library's tuned path). avg is sum then a
 * division of the result, as an MPI program would write it. */
#include "backends.h"

#include <cjson/cJSON.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    MPI_Comm comm;
    int rank, nranks;
    void *send, *recv;
    size_t cap; /* bytes of each buffer */
    MPI_Datatype half_type[DL_DT_COUNT];
    MPI_Op user_op[DL_OP_COUNT];
    int *vcounts; /* alltoallv: send counts, send displs, recv counts, recv displs (4 x n) */
} mpi_ctx_t;

/* The user op sees only the MPI type; these remember which dl type it is. */
static MPI_Datatype g_half_types[DL_DT_COUNT];

static dl_dtype_t half_dtype_of(MPI_Datatype t)
{
    for (int d = 0; d < DL_DT_COUNT; d++)
        if (g_half_types[d] != MPI_DATATYPE_NULL && g_half_types[d] == t)
            return (dl_dtype_t)d;
    return DL_DT_COUNT;
}

static void reduce_elems(dl_op_t op, void *in, void *inout, int *len, MPI_Datatype *t)
{
    dl_dtype_t dt = half_dtype_of(*t);
    if (dt == DL_DT_COUNT)
        return;
    for (int i = 0; i < *len; i++) {
        double a = dl_value_load(dt, in, (size_t)i), b = dl_value_load(dt, inout, (size_t)i), r;
        switch (op) {
        case DL_OP_PROD: r = a * b; break;
        case DL_OP_MIN: r = a < b ? a : b; break;
        case DL_OP_MAX: r = a > b ? a : b; break;
        default: r = a + b; break;
        }
        dl_value_store(dt, inout, (size_t)i, r);
    }
}
static void op_sum(void *in, void *io, int *n, MPI_Datatype *t) { reduce_elems(DL_OP_SUM, in, io, n, t); }
static void op_prod(void *in, void *io, int *n, MPI_Datatype *t) { reduce_elems(DL_OP_PROD, in, io, n, t); }
static void op_min(void *in, void *io, int *n, MPI_Datatype *t) { reduce_elems(DL_OP_MIN, in, io, n, t); }
static void op_max(void *in, void *io, int *n, MPI_Datatype *t) { reduce_elems(DL_OP_MAX, in, io, n, t); }

static MPI_Datatype mpi_type(const mpi_ctx_t *m, dl_dtype_t dt)
{
    switch (dt) {
    case DL_DT_FLOAT32: return MPI_FLOAT;
    case DL_DT_FLOAT64: return MPI_DOUBLE;
    case DL_DT_INT32: return MPI_INT32_T;
    case DL_DT_INT8: return MPI_INT8_T;
    case DL_DT_UINT8: return MPI_UINT8_T;
    case DL_DT_INT64: return MPI_INT64_T;
    case DL_DT_UINT32: return MPI_UINT32_T;
    case DL_DT_UINT64: return MPI_UINT64_T;
    default: return m->half_type[dt];
    }
}

static MPI_Op mpi_op(const mpi_ctx_t *m, dl_dtype_t dt, dl_op_t op)
{
    if (m->half_type[dt] != MPI_DATATYPE_NULL)
        return m->user_op[op == DL_OP_AVG ? DL_OP_SUM : op];
    switch (op) {
    case DL_OP_PROD: return MPI_PROD;
    case DL_OP_MIN: return MPI_MIN;
    case DL_OP_MAX: return MPI_MAX;
    default: return MPI_SUM;
    }
}

static dl_status_t mpi_probe(char *why, size_t len)
{
    (void)why; (void)len;
    return DL_OK; /* the supervisors are MPI ranks: always here */
}

static dl_status_t mpi_init(const dl_backend_cfg_t *cfg, void **out)
{
    if (!cfg->xc || !cfg->xc->mpi_comm) {
        dl_err("the mpi backend runs in the MPI ranks themselves, not in a worker");
        return DL_ERR_INTERNAL;
    }
    mpi_ctx_t *m = calloc(1, sizeof(*m));
    if (!m)
        return DL_ERR_NOMEM;
    if (MPI_Comm_dup(*(MPI_Comm *)cfg->xc->mpi_comm, &m->comm) != MPI_SUCCESS) {
        free(m);
        return DL_ERR_COMM;
    }
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    m->rank = cfg->rank;
    m->nranks = cfg->nranks;
    for (int d = 0; d < DL_DT_COUNT; d++) {
        m->half_type[d] = MPI_DATATYPE_NULL;
        if (d == DL_DT_FLOAT16 || d == DL_DT_BFLOAT16 || d == DL_DT_FP8E4M3 || d == DL_DT_FP8E5M2) {
            MPI_Type_contiguous((int)dl_dtype_size((dl_dtype_t)d), MPI_BYTE, &m->half_type[d]);
            MPI_Type_commit(&m->half_type[d]);
        }
        g_half_types[d] = m->half_type[d];
    }
    MPI_User_function *fns[DL_OP_COUNT] = {op_sum, op_prod, op_min, op_max, op_sum};
    for (int o = 0; o < DL_OP_COUNT; o++)
        MPI_Op_create(fns[o], 1, &m->user_op[o]);
    *out = m;
    return DL_OK;
}

static dl_status_t ensure(mpi_ctx_t *m, size_t bytes)
{
    if (bytes <= m->cap)
        return DL_OK;
    free(m->send);
    free(m->recv);
    m->send = malloc(bytes);
    m->recv = malloc(bytes);
    m->cap = bytes;
    if (!m->send || !m->recv) {
        dl_err("rank %d: cannot allocate 2 x %zu bytes of host buffers", m->rank, bytes);
        free(m->send);
        free(m->recv);
        m->send = m->recv = NULL;
        m->cap = 0;
        return DL_ERR_NOMEM;
    }
    return DL_OK;
}

/* MPI_Alltoallv's int counts and displacements, made once per case. */
static dl_status_t alltoallv_counts(mpi_ctx_t *m, const dl_case_t *c)
{
    int n = m->nranks;
    free(m->vcounts);
    m->vcounts = malloc(4 * (size_t)n * sizeof(int));
    if (!m->vcounts)
        return DL_ERR_NOMEM;
    int *sc = m->vcounts, *sd = sc + n, *rc = sd + n, *rd = rc + n;
    size_t es = dl_dtype_size(c->dtype), so = 0, ro = 0;
    for (int j = 0; j < n; j++) {
        size_t s = dl_alltoallv_count(m->rank, j, n, c->counts.requested, es);
        size_t r = dl_alltoallv_count(j, m->rank, n, c->counts.requested, es);
        if (so + s > 0x7fffffff || ro + r > 0x7fffffff) {
            dl_err("rank %d: alltoallv of %zu elements is past MPI's int counts", m->rank, so + s);
            return DL_ERR_USAGE;
        }
        sc[j] = (int)s, sd[j] = (int)so, rc[j] = (int)r, rd[j] = (int)ro;
        so += s;
        ro += r;
    }
    return DL_OK;
}

static dl_status_t mpi_prepare(void *ctx, const dl_case_t *c)
{
    mpi_ctx_t *m = ctx;
    size_t es = dl_dtype_size(c->dtype);
    size_t need = dl_counts_buffer_elems(&c->counts, DL_PLACE_IN, 1);
    dl_status_t st = ensure(m, need * es);
    if (st == DL_OK && c->coll->id == DL_COLL_ALLTOALLV)
        st = alltoallv_counts(m, c);
    if (st == DL_OK)
        dl_fill_host(c->coll, c->dtype, c->op, m->rank, &c->counts, c->place,
                     c->place == DL_PLACE_IN ? m->recv : m->send, m->recv);
    return st;
}

static void divide(void *buf, dl_dtype_t dt, size_t n, int by)
{
    for (size_t i = 0; i < n; i++)
        dl_value_store(dt, buf, i, dl_value_load(dt, buf, i) / by);
}

/* One call's arguments, made once per call from the case. */
typedef struct {
    void *sb, *rb; /* send (MPI_IN_PLACE in place) and receive buffers */
    MPI_Datatype t;
    MPI_Op op;
    int n, in;
    size_t es;
} mpi_call_t;

static int allreduce(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k)
{
    int rc = MPI_Allreduce(k->sb, k->rb, k->n, k->t, k->op, m->comm);
    if (rc == MPI_SUCCESS && c->op == DL_OP_AVG)
        divide(k->rb, c->dtype, c->counts.recv_count, m->nranks);
    return rc;
}

static int reduce(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k)
{
    void *sb = k->in && m->rank != c->root ? m->recv : k->sb; /* MPI_IN_PLACE is the root's */
    int rc = MPI_Reduce(sb, k->rb, k->n, k->t, k->op, c->root, m->comm);
    if (rc == MPI_SUCCESS && c->op == DL_OP_AVG && m->rank == c->root)
        divide(k->rb, c->dtype, c->counts.recv_count, m->nranks);
    return rc;
}

/* MPI's in-place form reads the whole buffer and writes block 0; dlcomm's
 * (NCCL's) wants block `rank`: move it there. */
static int reducescatter(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k)
{
    const dl_counts_t *cn = &c->counts;
    int rc = MPI_Reduce_scatter_block(k->sb, k->rb, k->n, k->t, k->op, m->comm);
    if (rc == MPI_SUCCESS && k->in && cn->inplace_recv_offset)
        memmove((char *)m->recv + cn->inplace_recv_offset * k->es, m->recv, cn->recv_count * k->es);
    if (rc == MPI_SUCCESS && c->op == DL_OP_AVG)
        divide((char *)m->recv + (k->in ? cn->inplace_recv_offset * k->es : 0), c->dtype,
               cn->recv_count, m->nranks);
    return rc;
}

static int allgather(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k)
{
    (void)c;
    return MPI_Allgather(k->sb, k->n, k->t, k->rb, k->n, k->t, m->comm);
}

static int alltoall(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k)
{
    (void)c;
    return MPI_Alltoall(k->sb, k->n, k->t, k->rb, k->n, k->t, m->comm);
}

static int broadcast(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k)
{
    if (k->in || m->rank != c->root)
        return MPI_Bcast(k->rb, k->n, k->t, c->root, m->comm);
    int rc = MPI_Bcast(m->send, k->n, k->t, c->root, m->comm);
    memcpy(k->rb, m->send, c->counts.recv_count * k->es); /* out-of-place: the root's copy */
    return rc;
}

/* MPI_IN_PLACE is the root's; the others send their block from its place. */
static int gather(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k)
{
    void *sb = k->sb;
    if (k->in)
        sb = m->rank == c->root ? MPI_IN_PLACE
                                : (char *)m->recv + c->counts.inplace_send_offset * k->es;
    return MPI_Gather(sb, k->n, k->t, k->rb, k->n, k->t, c->root, m->comm);
}

static int scatter(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k)
{
    if (!k->in)
        return MPI_Scatter(m->send, k->n, k->t, k->rb, k->n, k->t, c->root, m->comm);
    if (m->rank == c->root)
        return MPI_Scatter(m->recv, k->n, k->t, MPI_IN_PLACE, k->n, k->t, c->root, m->comm);
    return MPI_Scatter(NULL, k->n, k->t, (char *)m->recv + c->counts.inplace_recv_offset * k->es,
                       k->n, k->t, c->root, m->comm);
}

/* In place: send from a copy (part of the time). */
static int alltoallv(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k)
{
    int *v = m->vcounts, np = m->nranks;
    if (k->in && c->counts.send_count) /* a rank that sends nothing may have no buffer */
        memcpy(m->send, m->recv, c->counts.send_count * k->es);
    return MPI_Alltoallv(m->send, v, v + np, k->t, k->rb, v + 2 * np, v + 3 * np, k->t, m->comm);
}

static int sendrecv(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k)
{
    (void)c;
    int to = (m->rank + 1) % m->nranks, from = (m->rank - 1 + m->nranks) % m->nranks;
    if (k->in)
        return MPI_Sendrecv_replace(k->rb, k->n, k->t, to, 0, from, 0, m->comm, MPI_STATUS_IGNORE);
    return MPI_Sendrecv(m->send, k->n, k->t, to, 0, k->rb, k->n, k->t, from, 0, m->comm,
                        MPI_STATUS_IGNORE);
}

/* The MPI call of each collective: a new collective is a line here (or an
 * explicit NULL, which mpi_supports reports). */
typedef int (*mpi_call_fn)(mpi_ctx_t *m, const dl_case_t *c, const mpi_call_t *k);
static const mpi_call_fn calls[] = {
    [DL_COLL_ALLREDUCE] = allreduce, [DL_COLL_ALLGATHER] = allgather,
    [DL_COLL_BROADCAST] = broadcast, [DL_COLL_REDUCESCATTER] = reducescatter,
    [DL_COLL_ALLTOALL] = alltoall,   [DL_COLL_SENDRECV] = sendrecv,
    [DL_COLL_REDUCE] = reduce,       [DL_COLL_GATHER] = gather,
    [DL_COLL_SCATTER] = scatter,     [DL_COLL_ALLTOALLV] = alltoallv,
};
_Static_assert(DL_ARRAY_SIZE(calls) == DL_COLL_COUNT, "an entry (or NULL) for every collective");

/* One call of the case's collective. */
static int call_once(mpi_ctx_t *m, const dl_case_t *c)
{
    int in = c->place == DL_PLACE_IN;
    mpi_call_t k = {.sb = in ? MPI_IN_PLACE : m->send, .rb = m->recv,
                    .t = mpi_type(m, c->dtype), .op = mpi_op(m, c->dtype, c->op),
                    .n = (int)c->counts.param_count, .in = in, .es = dl_dtype_size(c->dtype)};
    return calls[c->coll->id] ? calls[c->coll->id](m, c, &k) : MPI_ERR_OTHER;
}

static int mpi_supports(const dl_case_t *c, char *why, size_t len)
{
    if (calls[c->coll->id])
        return 1;
    snprintf(why, len, "the mpi backend has no call for %s", c->coll->name);
    return 0;
}

static dl_status_t report(mpi_ctx_t *m, const dl_case_t *c, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    dl_err("rank %d: MPI %s failed: %s", m->rank, c->coll->name, msg);
    return DL_ERR_COMM;
}

/* Rooted collectives (broadcast, reduce, gather, scatter) are timed as OSU's
 * latency benchmarks time them: each call alone, from just before it to
 * its return on this rank, then an untimed barrier, so no rank starts call
 * i+1 while another is still in call i. Back to back, the root of an eager
 * broadcast returns at once and runs ahead: the times would be a pipelined
 * issue rate, not a latency. The batch's total is the sum of the calls'
 * times (the barriers are not part of it). */
static dl_status_t run_osu(mpi_ctx_t *m, const dl_case_t *c, int iters, double *times,
                           double *total)
{
    double sum = 0;
    for (int i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        int rc = call_once(m, c);
        double dt = MPI_Wtime() - t0;
        if (rc != MPI_SUCCESS)
            return report(m, c, rc);
        if (times)
            times[i] = dt;
        sum += dt;
        rc = MPI_Barrier(m->comm);
        if (rc != MPI_SUCCESS)
            return report(m, c, rc);
    }
    *total = sum;
    return DL_OK;
}

static dl_status_t mpi_run(void *ctx, const dl_case_t *c, int iters, double *times, double *total)
{
    mpi_ctx_t *m = ctx;
    if (c->coll->has_root)
        return run_osu(m, c, iters, times, total);
    double start = MPI_Wtime(), prev = start;
    if (times) {
        /* One clock read per call, not two: a call's time runs from the end
         * of the previous one, so the times partition the batch (their sum
         * is its total) and the loop adds as little as it can to a call. */
        for (int i = 0; i < iters; i++) {
            int rc = call_once(m, c);
            double now = MPI_Wtime();
            times[i] = now - prev;
            prev = now;
            if (rc != MPI_SUCCESS)
                return report(m, c, rc);
        }
    } else {
        for (int i = 0; i < iters; i++) {
            int rc = call_once(m, c);
            if (rc != MPI_SUCCESS)
                return report(m, c, rc);
        }
    }
    *total = (times ? prev : MPI_Wtime()) - start;
    return DL_OK;
}

static dl_status_t mpi_check(void *ctx, const dl_case_t *c, uint64_t *wrong)
{
    mpi_ctx_t *m = ctx;
    dl_status_t st = mpi_prepare(ctx, c);
    if (st != DL_OK)
        return st;
    int rc = call_once(m, c);
    if (rc != MPI_SUCCESS)
        return report(m, c, rc);
    *wrong = dl_check_host(c->coll, c->dtype, c->op, m->rank, m->nranks, c->root, &c->counts,
                           c->place, m->recv);
    return DL_OK;
}

static void mpi_fini(void *ctx)
{
    mpi_ctx_t *m = ctx;
    if (!m)
        return;
    for (int d = 0; d < DL_DT_COUNT; d++) {
        if (m->half_type[d] != MPI_DATATYPE_NULL)
            MPI_Type_free(&m->half_type[d]);
        g_half_types[d] = MPI_DATATYPE_NULL;
    }
    for (int o = 0; o < DL_OP_COUNT; o++)
        MPI_Op_free(&m->user_op[o]);
    MPI_Comm_free(&m->comm);
    free(m->vcounts);
    free(m->send);
    free(m->recv);
    free(m);
}

static void mpi_describe(void *ctx, void *json_obj)
{
    (void)ctx;
    cJSON_AddStringToObject(json_obj, "rooted_timing",
                            "osu: each call timed alone, then an untimed barrier");
    cJSON_AddStringToObject(json_obj, "unrooted_timing", "back to back, one clock read per call");
}

const dl_backend_ops_t dl_backend_mpi = {
    .name = "mpi",
   
    .caps = DL_CAP_SPLIT, /* in the supervisors: MPI_Comm_split */
    /* MPI-3 counts are int; Open MPI 4.1 has no MPI-4 large-count calls,
     * and a chunked call would be several calls timed as one. */
    .max_count = 2147483647,
    .probe = mpi_probe,
    .init = mpi_init,
    .prepare = mpi_prepare,
    .run = mpi_run,
    .check = mpi_check,
    .fini = mpi_fini,
    .supports = mpi_supports,
    .describe = mpi_describe,
};
