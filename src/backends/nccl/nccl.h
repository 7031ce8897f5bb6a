/* The nccl backend's parts (internal): the ops and the waits that bound
 * every call (nccl.c), the buffers and their registration (buffers.c), one
 * collective call on the stream, by a table indexed by dl_coll_id_t
 * (enqueue.c), and CUDA graphs and buffer slices (graph.c). */
#ifndef DL_BACKENDS_NCCL_H
#define DL_BACKENDS_NCCL_H

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../backends.h"

typedef struct {
    int rank, nranks, device, graph_iters;
    double deadline_s;
    ncclComm_t comm;
    cudaStream_t stream;
    void *send, *recv, *scratch; /* scratch: the copy in-place alltoall/sendrecv send from */
    size_t cap, cap_hint; /* cap_hint: what the plan's largest case needs */
    size_t scratch_cap;
    double comm_init_s;   /* seconds ncclCommInitRankConfig took to complete */
    unsigned long long *d_wrong;
    volatile int *h_go; /* mapped host memory: the host starts a timed batch */
    int *d_go;          /* the same, as the device sees it */
    cudaEvent_t *ev;
    int nev;
    cudaGraphExec_t graph;
    dl_case_t graph_case; /* what the graph holds */
    int has_graph;
    char name[96];
    size_t *vcounts; /* alltoallv: send counts, send offsets, recv counts, recv offsets (4 x n) */
    int reg;                  /* -R: 0 none, 1 ncclCommRegister, 2 ncclMemAlloc + symmetric window */
    int no_rotate;            /* --no-rotate: every timed call on the same bytes */
    size_t shift;             /* the timed call's slice: its offset into send and recv */
    unsigned long slice;      /* timed calls so far: the next slice */
    void *reg_handle[2];      /* -R 1: send, recv */
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    ncclWindow_t win[2];      /* -R 2: send, recv */
#endif
    dl_choice_t choice;       /* what NCCL chose for the last checked call */
} nccl_ctx_t;

/* The nccl backend's own options (sweep -G). */
typedef struct {
    long graph_iters; /* calls captured per CUDA graph; 0 = no graphs */
    int reg;          /* -R: buffer registration (nccl-tests' -R): 0, 1 or 2 */
    int no_rotate;    /* --no-rotate */
} nccl_opts_t;

dl_status_t nccl_cuda_fail(const char *what, cudaError_t e);
#define CUDA_TRY(call)                                  \
    do {                                                \
        cudaError_t e_ = (call);                        \
        if (e_ != cudaSuccess)                          \
            return nccl_cuda_fail(#call, e_);           \
    } while (0)

/* Waits for the stream (and the communicator) against the deadline; aborts
 * the communicator rather than hang. */
dl_status_t nccl_wait_stream(nccl_ctx_t *m, const char *what);
/* A non-blocking call's result, waited for while ncclInProgress. */
dl_status_t nccl_ok(nccl_ctx_t *m, ncclResult_t r, const char *what);
/* nccl_ok, then until the communicator's state settles (NVIDIA/nccl#1734). */
dl_status_t nccl_settled(nccl_ctx_t *m, ncclResult_t r, const char *what);
/* nccl_ok for a collective call, naming the case. */
dl_status_t nccl_call_ok(nccl_ctx_t *m, ncclResult_t r, const dl_case_t *c);
ncclDataType_t nccl_type(dl_dtype_t dt); /* ncclNumTypes: not in this NCCL */

/* choice.c: NCCL's choice per checked call, through dlcomm's profiler
 * plugin. setup: before the first communicator (loads the plugin, points
 * NCCL_PROFILER_PLUGIN at it); arm around a call; take what it saw
 * (from "profiler", or all empty); source: the plugin's path, or why off. */
void nccl_choice_setup(void);
void nccl_choice_arm(int on);
void nccl_choice_take(dl_choice_t *out);
const char *nccl_choice_source(void);

/* buffers.c */
void nccl_deregister(nccl_ctx_t *m);
void nccl_free_buffers(nccl_ctx_t *m);
/* Buffers for bytes (the plan's largest case at once, where it fits), and
 * the scratch copy in-place point-to-point sends from, when scratch. */
dl_status_t nccl_ensure(nccl_ctx_t *m, size_t bytes, int scratch);

/* enqueue.c: one call of the case's collective on the stream; whether this
 * build has a call for a collective; whether its in-place form sends from
 * the scratch copy. */
ncclResult_t nccl_enqueue(nccl_ctx_t *m, const dl_case_t *c);
int nccl_has_call(dl_coll_id_t id);
int nccl_needs_scratch(const dl_case_t *c);

/* graph.c: one unit of timing (a call, or a graph replay of graph_iters
 * calls), the graph made first when the case changed. */
dl_status_t nccl_ensure_graph(nccl_ctx_t *m, const dl_case_t *c);
dl_status_t nccl_launch_unit(nccl_ctx_t *m, const dl_case_t *c);

#endif
