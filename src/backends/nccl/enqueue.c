/* One call of a case's collective on the stream, by a table indexed by
 * dl_coll_id_t: a new collective is an entry here (or an explicit NULL,
 * which nccl_supports reports). A call's buffers are the timed slice's
 * (m->shift; graph.c). */
#include "nccl.h"

static const ncclRedOp_t nccl_ops[DL_OP_COUNT] = {ncclSum, ncclProd, ncclMin, ncclMax, ncclAvg};

typedef struct {
    char *send, *recv; /* where the call reads and writes (in place: inside rb) */
    char *rb;          /* the receive buffer's slice */
    size_t es;
    ncclDataType_t t;
    ncclRedOp_t op;
    int in;
} nccl_call_t;

static ncclResult_t allreduce(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    return ncclAllReduce(k->send, k->recv, c->counts.param_count, k->t, k->op, m->comm, m->stream);
}

static ncclResult_t reduce(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    return ncclReduce(k->send, k->recv, c->counts.param_count, k->t, k->op, c->root, m->comm,
                      m->stream);
}

static ncclResult_t broadcast(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    return ncclBroadcast(k->send, k->recv, c->counts.param_count, k->t, c->root, m->comm,
                         m->stream);
}

static ncclResult_t allgather(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    return ncclAllGather(k->send, k->recv, c->counts.param_count, k->t, m->comm, m->stream);
}

static ncclResult_t reducescatter(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    char *recv = k->in ? k->rb + c->counts.inplace_recv_offset * k->es : k->recv;
    return ncclReduceScatter(k->send, recv, c->counts.param_count, k->t, k->op, m->comm,
                             m->stream);
}

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
/* In place: the send block at its place in recv (counts). */
static ncclResult_t gather(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    return ncclGather(k->send, k->recv, c->counts.param_count, k->t, c->root, m->comm, m->stream);
}

static ncclResult_t scatter(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    char *send = k->in ? k->rb : k->send;
    char *recv = k->in ? k->rb + c->counts.inplace_recv_offset * k->es : k->recv;
    return ncclScatter(send, recv, c->counts.param_count, k->t, c->root, m->comm, m->stream);
}
#else
/* Before NCCL 2.28 (out of place only, nccl_supports): the root's n
 * receives or sends in a group, as nccl-tests does. */
static ncclResult_t rooted_p2p(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k, int gather)
{
    size_t n = c->counts.param_count, blk = n * k->es;
    ncclResult_t r = ncclGroupStart();
    if (m->rank == c->root)
        for (int p = 0; p < m->nranks; p++)
            gather ? ncclRecv(k->recv + p * blk, n, k->t, p, m->comm, m->stream)
                   : ncclSend(k->send + p * blk, n, k->t, p, m->comm, m->stream);
    gather ? ncclSend(k->send, n, k->t, c->root, m->comm, m->stream)
           : ncclRecv(k->recv, n, k->t, c->root, m->comm, m->stream);
    ncclResult_t g = ncclGroupEnd();
    return r != ncclSuccess ? r : g;
}

static ncclResult_t gather(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    return rooted_p2p(m, c, k, 1);
}

static ncclResult_t scatter(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    return rooted_p2p(m, c, k, 0);
}
#endif

/* Point-to-point collectives cannot read and write one buffer at once: in
 * place, they send from a copy made on the same stream (part of the
 * time). NULL when the copy could not be queued. */
static char *p2p_send(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    if (!k->in)
        return k->send;
    if (cudaMemcpyAsync(m->scratch, k->rb, c->counts.send_count * k->es, cudaMemcpyDeviceToDevice,
                        m->stream) != cudaSuccess)
        return NULL;
    return m->scratch;
}

static ncclResult_t sendrecv(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    char *send = p2p_send(m, c, k);
    if (!send)
        return ncclUnhandledCudaError;
    int to = (m->rank + 1) % m->nranks, from = (m->rank - 1 + m->nranks) % m->nranks;
    size_t n = c->counts.param_count;
    ncclResult_t r = ncclGroupStart();
    ncclSend(send, n, k->t, to, m->comm, m->stream);
    ncclRecv(k->recv, n, k->t, from, m->comm, m->stream);
    ncclResult_t g = ncclGroupEnd();
    return r != ncclSuccess ? r : g;
}

static ncclResult_t alltoall(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    char *send = p2p_send(m, c, k);
    if (!send)
        return ncclUnhandledCudaError;
    size_t n = c->counts.param_count;
    ncclResult_t r = ncclGroupStart();
    for (int p = 0; p < m->nranks; p++) {
        ncclSend(send + (size_t)p * n * k->es, n, k->t, p, m->comm, m->stream);
        ncclRecv(k->recv + (size_t)p * n * k->es, n, k->t, p, m->comm, m->stream);
    }
    ncclResult_t g = ncclGroupEnd();
    return r != ncclSuccess ? r : g;
}

/* As nccl-tests: a send and a receive per peer, of the counts prepare made. */
static ncclResult_t alltoallv(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k)
{
    char *send = p2p_send(m, c, k);
    if (!send)
        return ncclUnhandledCudaError;
    const size_t *sc = m->vcounts, *so = sc + m->nranks, *rc = so + m->nranks, *ro = rc + m->nranks;
    ncclResult_t r = ncclGroupStart();
    for (int p = 0; p < m->nranks; p++) {
        if (sc[p])
            ncclSend(send + so[p] * k->es, sc[p], k->t, p, m->comm, m->stream);
        if (rc[p])
            ncclRecv(k->recv + ro[p] * k->es, rc[p], k->t, p, m->comm, m->stream);
    }
    ncclResult_t g = ncclGroupEnd();
    return r != ncclSuccess ? r : g;
}

typedef ncclResult_t (*nccl_call_fn)(nccl_ctx_t *m, const dl_case_t *c, const nccl_call_t *k);
static const nccl_call_fn calls[] = {
    [DL_COLL_ALLREDUCE] = allreduce, [DL_COLL_ALLGATHER] = allgather,
    [DL_COLL_BROADCAST] = broadcast, [DL_COLL_REDUCESCATTER] = reducescatter,
    [DL_COLL_ALLTOALL] = alltoall,   [DL_COLL_SENDRECV] = sendrecv,
    [DL_COLL_REDUCE] = reduce,       [DL_COLL_GATHER] = gather,
    [DL_COLL_SCATTER] = scatter,     [DL_COLL_ALLTOALLV] = alltoallv,
};
_Static_assert(DL_ARRAY_SIZE(calls) == DL_COLL_COUNT, "an entry (or NULL) for every collective");

int nccl_has_call(dl_coll_id_t id)
{
    return calls[id] != NULL;
}

int nccl_needs_scratch(const dl_case_t *c)
{
    return c->place == DL_PLACE_IN && (calls[c->coll->id] == alltoall ||
                                       calls[c->coll->id] == sendrecv ||
                                       calls[c->coll->id] == alltoallv);
}

ncclResult_t nccl_enqueue(nccl_ctx_t *m, const dl_case_t *c)
{
    size_t es = dl_dtype_size(c->dtype);
    int in = c->place == DL_PLACE_IN;
    char *rb = (char *)m->recv + m->shift, *sb = (char *)m->send + m->shift;
    nccl_call_t k = {.send = in ? rb + c->counts.inplace_send_offset * es : sb, .recv = rb,
                     .rb = rb, .es = es, .t = nccl_type(c->dtype), .op = nccl_ops[c->op],
                     .in = in};
    return calls[c->coll->id] ? calls[c->coll->id](m, c, &k) : ncclInvalidArgument;
}
