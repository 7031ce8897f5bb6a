/* The nccl backend (runs in a worker process, one GPU per rank chosen by local
 * rank): cudaMalloc'd buffers, a non-blocking communicator so a deadline can
 * abort it (cudaStreamQuery + ncclCommGetAsyncError polled, then
 * ncclCommAbort), CUDA events between calls, optional CUDA graphs, and fill
 * and check on the device. */
#include <cjson/cJSON.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl.h"
#include "nccl_dev.h"

dl_status_t nccl_cuda_fail(const char *what, cudaError_t e)
{
    dl_err("%s: %s", what, cudaGetErrorString(e));
    return DL_ERR_COMM;
}

static dl_status_t nccl_probe(char *why, size_t len)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        dl_no_gpu_why(e != cudaSuccess ? cudaGetErrorString(e) : "0 devices", why, len);
        return DL_ERR_UNAVAILABLE;
    }
    return DL_OK;
}

dl_status_t nccl_wait_stream(nccl_ctx_t *m, const char *what)
{
    double until = dl_now() + m->deadline_s;
    for (;;) {
        cudaError_t e = cudaStreamQuery(m->stream);
        if (e == cudaSuccess)
            return DL_OK;
        if (e != cudaErrorNotReady)
            return nccl_cuda_fail(what, e);
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(m->comm, &async);
        if (async != ncclSuccess && async != ncclInProgress) {
            dl_err("rank %d: %s: %s", m->rank, what, ncclGetErrorString(async));
            ncclCommAbort(m->comm);
            m->comm = NULL;
            return DL_ERR_COMM;
        }
        /* NCCL's own threads may share this core (a rank bound to one):
         * they run first. */
        sched_yield();
        if (dl_now() > until) {
            dl_err("rank %d: %s did not finish within %.0f s: aborting the communicator", m->rank,
                   what, m->deadline_s);
            ncclCommAbort(m->comm);
            m->comm = NULL;
            return DL_ERR_TIMEOUT;
        }
    }
}

/* A non-blocking call may return ncclInProgress: wait until it is enqueued.
 * On the timed path: nothing but the comparison when the call succeeded. */
dl_status_t nccl_ok(nccl_ctx_t *m, ncclResult_t r, const char *what)
{
    if (r == ncclSuccess)
        return DL_OK;
    double until = dl_now() + m->deadline_s;
    while (r == ncclInProgress) {
        if (dl_now() > until) {
            dl_err("rank %d: %s still in progress after %.0f s", m->rank, what, m->deadline_s);
            ncclCommAbort(m->comm);
            m->comm = NULL;
            return DL_ERR_TIMEOUT;
        }
        sched_yield(); /* the call goes on in NCCL's thread, maybe on this core */
        ncclCommGetAsyncError(m->comm, &r);
    }
    if (r != ncclSuccess) {
        dl_err("rank %d: %s: %s (%s)", m->rank, what, ncclGetErrorString(r),
               ncclGetLastError(m->comm));
        return DL_ERR_COMM;
    }
    return DL_OK;
}

/* A non-blocking communicator can report ncclSuccess from a call whose
 * work NCCL's thread still finishes (its state stays ncclInProgress after
 * init returns; NVIDIA/nccl#1734); the next call that checks the state,
 * ncclCommWindowRegister among them, then refuses. Wait until it settles. */
dl_status_t nccl_settled(nccl_ctx_t *m, ncclResult_t r, const char *what)
{
    dl_status_t st = nccl_ok(m, r, what);
    return st == DL_OK ? nccl_ok(m, ncclInProgress, what) : st;
}

dl_status_t nccl_call_ok(nccl_ctx_t *m, ncclResult_t r, const dl_case_t *c)
{
    if (r == ncclSuccess) /* the timed path: no formatting */
        return DL_OK;
    char what[160];
    snprintf(what, sizeof(what), "%s %s %s %s-place %zu B", c->coll->name,
             dl_dtype_names[c->dtype], c->coll->has_op ? dl_op_names[c->op] : "",
             c->place == DL_PLACE_IN ? "in" : "out", c->counts.bytes);
    return nccl_ok(m, r, what);
}

static dl_status_t nccl_init(const dl_backend_cfg_t *cfg, void **out)
{
    nccl_ctx_t *m = calloc(1, sizeof(*m));
    if (!m)
        return DL_ERR_NOMEM;
    *out = m;
    int ndev = 0;
    CUDA_TRY(cudaGetDeviceCount(&ndev));
    m->rank = cfg->rank;
    m->nranks = cfg->nranks;
    const nccl_opts_t *o = cfg->opts;
    m->graph_iters = o ? (int)o->graph_iters : 0;
    m->reg = o ? (int)o->reg : 0;
    m->no_rotate = o ? o->no_rotate : 0;
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 27, 0)
    if (m->reg == 2) {
        dl_err("-R 2 (symmetric windows) needs NCCL 2.27 or later; this build has %d.%d",
               NCCL_MAJOR, NCCL_MINOR);
        return DL_ERR_UNAVAILABLE;
    }
#endif
    m->deadline_s = cfg->deadline_s > 0 ? cfg->deadline_s : 600;
    m->device = cfg->local_rank % ndev;
    m->cap_hint = cfg->max_bytes;
    if (cfg->local_size > ndev)
        dl_warn("rank %d: %d ranks on this host share %d GPUs", cfg->rank, cfg->local_size, ndev);
    CUDA_TRY(cudaSetDevice(m->device));
    CUDA_TRY(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    CUDA_TRY(cudaMalloc((void **)&m->d_wrong, 2 * sizeof(*m->d_wrong)));
    CUDA_TRY(cudaHostAlloc((void **)&m->h_go, sizeof(int), cudaHostAllocMapped));
    CUDA_TRY(cudaHostGetDevicePointer((void **)&m->d_go, (void *)m->h_go, 0));

    ncclUniqueId id;
    if (m->rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) {
        dl_err("rank 0: ncclGetUniqueId failed");
        return DL_ERR_COMM;
    }
    const dl_xcomm_t *x = cfg->xc;
    dl_status_t st = x && x->bcast ? x->bcast(x->arg, &id, sizeof(id)) : DL_ERR_INTERNAL;
    if (st != DL_OK)
        return st;
    nccl_choice_setup(); /* before NCCL loads its profiler plugin */
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    double t0 = dl_now();
    st = nccl_settled(m, ncclCommInitRankConfig(&m->comm, m->nranks, id, m->rank, &config),
                      "ncclCommInitRankConfig");
    m->comm_init_s = dl_now() - t0;
    return st;
}

ncclDataType_t nccl_type(dl_dtype_t dt)
{
    static const ncclDataType_t map[DL_DT_COUNT] = {
        ncclFloat32, ncclFloat16, ncclBfloat16, ncclFloat64, ncclInt32, ncclInt8,
        ncclUint8,   ncclInt64,   ncclUint32,   ncclUint64,
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
        ncclFloat8e4m3, ncclFloat8e5m2,
#else
        ncclNumTypes, ncclNumTypes,
#endif
    };
    return map[dt];
}

static dl_dev_type_t dev_type(const dl_case_t *c, int nranks)
{
    return (dl_dev_type_t){.dtype = (int)c->dtype,
                           .narrow = dl_dtype_is_narrow(c->dtype),
                           .is_unsigned = dl_dtype_is_unsigned(c->dtype),
                           .is_float = dl_dtype_is_float(c->dtype),
                           .int_avg = !dl_dtype_is_float(c->dtype) && c->op == DL_OP_AVG,
                           .tol = dl_match_tolerance(c->dtype, c->op, nranks)};
}

static int nccl_supports(const dl_case_t *c, char *why, size_t len)
{
    if (!nccl_has_call(c->coll->id)) {
        snprintf(why, len, "the nccl backend has no call for %s", c->coll->name);
        return 0;
    }
    int fp8 = c->dtype == DL_DT_FP8E4M3 || c->dtype == DL_DT_FP8E5M2;
    if (fp8 && c->coll->has_op && c->op == DL_OP_AVG) { /* ncclInvalidArgument in 2.28 */
        snprintf(why, len, "NCCL has no avg for fp8 types");
        return 0;
    }
    if (nccl_type(c->dtype) == ncclNumTypes) {
        snprintf(why, len, "fp8 types need NCCL 2.24 or later");
        return 0;
    }
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 28, 0)
    if (c->place == DL_PLACE_IN && (c->coll->id == DL_COLL_GATHER || c->coll->id == DL_COLL_SCATTER)) {
        snprintf(why, len, "in-place %s needs NCCL 2.28 (ncclGather/ncclScatter)", c->coll->name);
        return 0;
    }
#endif
    return 1;
}

/* All-to-all-v's per-peer counts and offsets, once per case. */
static dl_status_t alltoallv_counts(nccl_ctx_t *m, const dl_case_t *c)
{
    int n = m->nranks;
    size_t es = dl_dtype_size(c->dtype);
    free(m->vcounts);
    if (!(m->vcounts = malloc(4 * (size_t)n * sizeof(size_t))))
        return DL_ERR_NOMEM;
    size_t *sc = m->vcounts, *so = sc + n, *rc = so + n, *ro = rc + n;
    for (int j = 0; j < n; j++) {
        sc[j] = dl_alltoallv_count(m->rank, j, n, c->counts.requested, es);
        rc[j] = dl_alltoallv_count(j, m->rank, n, c->counts.requested, es);
        so[j] = j ? so[j - 1] + sc[j - 1] : 0;
        ro[j] = j ? ro[j - 1] + rc[j - 1] : 0;
    }
    return DL_OK;
}

static dl_status_t nccl_prepare(void *ctx, const dl_case_t *c)
{
    nccl_ctx_t *m = ctx;
    size_t es = dl_dtype_size(c->dtype);
    if (nccl_type(c->dtype) == ncclNumTypes) {
        dl_err("dtype %s needs NCCL 2.24 or later", dl_dtype_names[c->dtype]);
        return DL_ERR_UNAVAILABLE;
    }
    if (c->coll->id == DL_COLL_ALLTOALLV && alltoallv_counts(m, c) != DL_OK)
        return DL_ERR_NOMEM;
    dl_status_t st = nccl_ensure(m, dl_counts_buffer_elems(&c->counts, DL_PLACE_IN, 1) * es,
                                 nccl_needs_scratch(c));
    if (st != DL_OK)
        return st;
    /* Poison the result region, then the send pattern where the call reads it. */
    CUDA_TRY(cudaMemsetAsync(m->recv, 0xA5, dl_counts_buffer_elems(&c->counts, c->place, 1) * es,
                             m->stream));
    char *dst = c->place == DL_PLACE_IN ? (char *)m->recv + c->counts.inplace_send_offset * es
                                        : (char *)m->send;
    dl_dev_type_t t = dev_type(c, m->nranks);
    CUDA_TRY(dl_dev_fill(dst, &t, c->coll->has_op, (int)c->op, m->rank, c->counts.send_count,
                         m->stream));
    return nccl_wait_stream(m, "fill");
}

static dl_status_t ensure_events(nccl_ctx_t *m, int n)
{
    if (n <= m->nev)
        return DL_OK;
    cudaEvent_t *ev = realloc(m->ev, (size_t)n * sizeof(*ev));
    if (!ev)
        return DL_ERR_NOMEM;
    m->ev = ev;
    for (; m->nev < n; m->nev++)
        CUDA_TRY(cudaEventCreate(&m->ev[m->nev]));
    return DL_OK;
}

/* The start spin's bound, should the host never say go. */
#define PRIME_MAX_SECONDS 0.001

static dl_status_t nccl_run(void *ctx, const dl_case_t *c, int iters, double *times, double *total)
{
    nccl_ctx_t *m = ctx;
    dl_status_t st = ensure_events(m, times ? iters + 1 : 2);
    if (st == DL_OK && m->graph_iters > 0)
        st = nccl_ensure_graph(m, c);
    if (st != DL_OK)
        return st;
    /* Without times (the measurement loop's timed batches) one event pair
     * around the batch: no per-call event is on the stream, as in a job.
     * With times, events between calls: each call's time includes the gap to the next
     * launch, as a job issuing calls back to back sees it. A batch starts on
     * an idle GPU: the first event waits (a spin on a host flag) until the
     * first call is queued, so that call is not charged the launch from idle,
     * a cost the later calls of a GPU-bound batch never pay. */
    *m->h_go = 0;
    CUDA_TRY(dl_dev_spin(m->d_go, PRIME_MAX_SECONDS, m->stream));
    CUDA_TRY(cudaEventRecord(m->ev[0], m->stream));
    for (int i = 0; i < iters && st == DL_OK; i++) {
        st = nccl_launch_unit(m, c);
        if (st == DL_OK && times)
            CUDA_TRY(cudaEventRecord(m->ev[i + 1], m->stream));
        if (i == 0) /* queued (or failed): the spin ends */
            __atomic_store_n(m->h_go, 1, __ATOMIC_RELEASE);
    }
    int last = times ? iters : 1;
    if (!times)
        CUDA_TRY(cudaEventRecord(m->ev[last], m->stream));
    if (st == DL_OK)
        st = nccl_wait_stream(m, c->coll->name);
    if (st != DL_OK)
        return st;
    float ms = 0;
    double per_unit = m->graph_iters > 0 ? m->graph_iters : 1;
    for (int i = 0; times && i < iters; i++) {
        CUDA_TRY(cudaEventElapsedTime(&ms, m->ev[i], m->ev[i + 1]));
        times[i] = ms * 1e-3 / per_unit;
    }
    CUDA_TRY(cudaEventElapsedTime(&ms, m->ev[0], m->ev[last]));
    *total = ms * 1e-3 / per_unit;
    return DL_OK;
}

/* Names the first wrong element, so a report says where, not only how many. */
static void report_first_wrong(nccl_ctx_t *m, const dl_case_t *c, const char *res, size_t i)
{
    size_t es = dl_dtype_size(c->dtype);
    unsigned char got[8];
    double want = 0;
    if (cudaMemcpy(got, res + i * es, es, cudaMemcpyDeviceToHost) != cudaSuccess)
        return;
    dl_coll_expected(c->coll, c->dtype, c->op, m->rank, m->nranks, c->root, &c->counts, i, &want);
    dl_warn("rank %d: %s %s %zu B: first wrong element at index %zu of %zu: got %g, want %g",
            m->rank, c->coll->name, dl_dtype_names[c->dtype], c->counts.bytes, i,
            c->counts.recv_count, dl_value_load(c->dtype, got, 0), want);
}

static dl_status_t nccl_check(void *ctx, const dl_case_t *c, uint64_t *wrong)
{
    nccl_ctx_t *m = ctx;
    dl_status_t st = nccl_prepare(ctx, c);
    nccl_choice_arm(1); /* this call alone: never a timed one */
    if (st == DL_OK)
        st = nccl_call_ok(m, nccl_enqueue(m, c), c);
    if (st == DL_OK)
        st = nccl_wait_stream(m, c->coll->name);
    nccl_choice_arm(0);
    nccl_choice_take(&m->choice);
    if (st != DL_OK)
        return st;
    size_t es = dl_dtype_size(c->dtype);
    dl_dev_check_t k = {.coll = (int)c->coll->id, .rank = m->rank, .nranks = m->nranks,
                        .root = c->root, .op = (int)c->op, .per = c->counts.param_count,
                        .count = c->counts.recv_count};
    if (c->coll->has_op)
        for (int i = 0; i < 64; i++)
            k.table[i] = dl_pattern_reduced(c->dtype, c->op, m->nranks, (size_t)i);
    size_t *voff = NULL;
    if (c->coll->id == DL_COLL_ALLTOALLV) { /* the offsets table, on the device */
        size_t *h = dl_alltoallv_offsets(c->counts.requested, es, m->nranks, m->rank);
        size_t len = (2 * (size_t)m->nranks + 1) * sizeof(size_t);
        cudaError_t e = h ? cudaMalloc((void **)&voff, len) : cudaErrorMemoryAllocation;
        if (e == cudaSuccess)
            e = cudaMemcpy(voff, h, len, cudaMemcpyHostToDevice);
        free(h);
        if (e != cudaSuccess) {
            cudaFree(voff);
            return nccl_cuda_fail("alltoallv check offsets", e);
        }
        k.voff = voff;
    }
    dl_dev_type_t t = dev_type(c, m->nranks);
    const char *res = (char *)m->recv + (c->place == DL_PLACE_IN ? c->counts.inplace_recv_offset * es : 0);
    unsigned long long w[2] = {0, ~0ull}; /* count, first wrong index */
    CUDA_TRY(cudaMemcpyAsync(m->d_wrong, w, sizeof(w), cudaMemcpyHostToDevice, m->stream));
    CUDA_TRY(dl_dev_check(res, &t, &k, m->d_wrong, m->stream));
    CUDA_TRY(cudaMemcpyAsync(w, m->d_wrong, sizeof(w), cudaMemcpyDeviceToHost, m->stream));
    st = nccl_wait_stream(m, "check");
    cudaFree(voff); /* NULL but for alltoallv */
    *wrong = w[0];
    if (st == DL_OK && w[0])
        report_first_wrong(m, c, res, w[1]);
    return st;
}

/* The communicator's finalize (its peers' pending work flushed), bounded:
 * a clean finalize can block on a peer that is gone. 1 when it completed. */
static int comm_finalize(nccl_ctx_t *m)
{
    nccl_deregister(m);
    ncclResult_t r = ncclCommFinalize(m->comm);
    double until = dl_now() + 10;
    while (r == ncclInProgress && dl_now() < until) {
        sched_yield();
        ncclCommGetAsyncError(m->comm, &r);
    }
    return r == ncclSuccess;
}

static void nccl_fini(void *ctx)
{
    nccl_ctx_t *m = ctx;
    if (!m)
        return;
    double t0 = dl_now();
    if (m->comm) {
        /* Abort releases everything whether or not the finalize completed. */
        if (comm_finalize(m))
            ncclCommDestroy(m->comm);
        else
            ncclCommAbort(m->comm);
    }
    double t1 = dl_now();
    if (m->has_graph)
        cudaGraphExecDestroy(m->graph);
    for (int i = 0; i < m->nev; i++)
        cudaEventDestroy(m->ev[i]);
    free(m->ev);
    free(m->vcounts);
    double t2 = dl_now();
    nccl_free_buffers(m);
    if (m->h_go)
        cudaFreeHost((void *)m->h_go);
    cudaFree(m->d_wrong);
    if (m->stream)
        cudaStreamDestroy(m->stream);
    dl_info("rank %d: teardown: communicator %.3f s, %d events %.3f s, buffers %.3f s", m->rank,
            t1 - t0, m->nev, t2 - t1, dl_now() - t2);
    free(m);
}

/* The worker's last step, before its process exits: the communicator is
 * finalized and nothing else. ncclCommDestroy joins NCCL's proxy threads,
 * one of which polls with a 500 ms timeout: it held each profile's end for
 * up to 0.5 s (0.45 s of a 1.0 s one-row sweep on an H100, by strace), so
 * that a profile's time landed on 0.5 s steps. The exit releases the
 * threads, the buffers and the context at once. */
static void nccl_end(void *ctx)
{
    nccl_ctx_t *m = ctx;
    if (!m || !m->comm)
        return;
    double t0 = dl_now();
    if (!comm_finalize(m))
        ncclCommAbort(m->comm);
    dl_info("rank %d: end: communicator finalized in %.3f s; the exit releases the rest", m->rank,
            dl_now() - t0);
}

static void nccl_describe(void *ctx, void *json)
{
    nccl_ctx_t *m = ctx;
    int v = 0, rt = 0, drv = 0;
    ncclGetVersion(&v);
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    struct cudaDeviceProp p;
    char ver[32], bus[32] = "";
    snprintf(ver, sizeof(ver), "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
    cJSON_AddStringToObject(json, "nccl_version", ver);
    cJSON_AddNumberToObject(json, "cuda_runtime", rt);
    cJSON_AddNumberToObject(json, "cuda_driver", drv);
    if (m && cudaGetDeviceProperties(&p, m->device) == cudaSuccess) {
        cJSON_AddStringToObject(json, "gpu", p.name);
        cudaDeviceGetPCIBusId(bus, sizeof(bus), m->device);
        cJSON_AddStringToObject(json, "gpu_bus_id", bus);
        cJSON_AddNumberToObject(json, "gpu_index", m->device);
    }
    cJSON_AddNumberToObject(json, "graph_iters", m ? m->graph_iters : 0);
    static const char *const reg_names[] = {"none", "ncclCommRegister",
                                            "ncclMemAlloc + ncclCommWindowRegister (symmetric)"};
    cJSON_AddNumberToObject(json, "register", m ? m->reg : 0);
    cJSON_AddStringToObject(json, "registration", reg_names[m ? m->reg : 0]);
    if (m) {
        cJSON_AddNumberToObject(json, "comm_init_s", m->comm_init_s);
        cJSON_AddBoolToObject(json, "rotate", !m->no_rotate);
    }
    cJSON_AddStringToObject(json, "nccl_choice", nccl_choice_source()); /* plugin, or why not */
}

static void nccl_chose(void *ctx, dl_choice_t *out)
{
    *out = ((nccl_ctx_t *)ctx)->choice;
}

static void nccl_traits(void *ctx, dl_backend_traits_t *t)
{
    const nccl_ctx_t *m = ctx;
    t->unit_calls = m && m->graph_iters > 0 ? m->graph_iters : 1;
    t->colls_off = dl_nccl_algo_colls_off(getenv("NCCL_ALGO"), t->off_why, sizeof(t->off_why));
}

static const char *const reg_level_names[] = {"0", "1", "2"}; /* the level is the index */
static const dl_choices_t reg_levels = {.noun = "registration", .names = reg_level_names,
                                        .n = 3};

static const dl_opt_t nccl_opts[] = {
    {"graph", 'G', DL_OPT_INT, "0", "N", "nccl: calls captured per CUDA graph, replayed as one (0: no graphs)",
     offsetof(nccl_opts_t, graph_iters), dl_opt_nonneg_long},
    {"register", 'R', DL_OPT_ENUM, "0", "LEVEL",
     "nccl: 1 registers the buffers (ncclCommRegister), 2 allocates them with ncclMemAlloc as "
     "symmetric windows (NCCL 2.27+), as nccl-tests' -R",
     offsetof(nccl_opts_t, reg), NULL, &reg_levels},
    {"no-rotate", 0, DL_OPT_FLAG, "0", NULL,
     "nccl: every timed call on the same bytes (default: each on the next slice of the buffers, "
     "as nccl-tests does, so no size is timed from the L2 cache)",
     offsetof(nccl_opts_t, no_rotate), NULL},
};

const dl_backend_ops_t dl_backend_nccl = {
    .name = "nccl",
    .caps = DL_CAP_WORKER | DL_CAP_SPLIT | DL_CAP_DEVICE,
    .opts = nccl_opts,
    .nopts = DL_ARRAY_SIZE(nccl_opts),
    .opts_size = sizeof(nccl_opts_t),
    .probe = nccl_probe,
    .init = nccl_init,
    .prepare = nccl_prepare,
    .run = nccl_run,
    .check = nccl_check,
    .fini = nccl_fini,
    .end = nccl_end,
    .supports = nccl_supports,
    .describe = nccl_describe,
    .traits = nccl_traits,
    .chose = nccl_chose,
};
