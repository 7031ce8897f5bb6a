/* CUDA graphs (-G) and the slices a timed call moves (nccl-tests' rotation). */
#include "nccl.h"

#include <string.h>

/* A timed call's slice of the buffers. Where the buffers (sized for the
 * plan's largest case) hold several copies of this case's bytes, each
 * timed call moves the next one, as nccl-tests does: a size the L2 cache
 * would hold is then timed from memory, as a job's fresh gradients are,
 * not from the cache the previous call left warm. Slices start 256-byte
 * aligned; the checks use slice 0. --no-rotate keeps every call on it. */
static void next_slice(nccl_ctx_t *m, const dl_case_t *c)
{
    size_t bytes = dl_counts_buffer_elems(&c->counts, DL_PLACE_IN, 1) * dl_dtype_size(c->dtype);
    size_t step = (bytes + 255) & ~(size_t)255;
    size_t n = m->no_rotate || !step ? 1 : m->cap / step;
    m->shift = n > 1 ? step * (m->slice++ % n) : 0;
}

/* --graph N: N calls captured once per case, replayed as one unit. */
dl_status_t nccl_ensure_graph(nccl_ctx_t *m, const dl_case_t *c)
{
    if (m->has_graph && memcmp(&m->graph_case, c, sizeof(*c)) == 0)
        return DL_OK;
    if (m->has_graph)
        cudaGraphExecDestroy(m->graph);
    m->has_graph = 0;
    cudaGraph_t g;
    CUDA_TRY(cudaStreamBeginCapture(m->stream, cudaStreamCaptureModeThreadLocal));
    dl_status_t st = DL_OK;
    for (int i = 0; i < m->graph_iters && st == DL_OK; i++) {
        next_slice(m, c);
        st = nccl_call_ok(m, nccl_enqueue(m, c), c);
    }
    m->shift = 0;
    cudaError_t e = cudaStreamEndCapture(m->stream, &g);
    if (st != DL_OK)
        return st;
    if (e != cudaSuccess)
        return nccl_cuda_fail("cudaStreamEndCapture", e);
    e = cudaGraphInstantiate(&m->graph, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess)
        return nccl_cuda_fail("cudaGraphInstantiate", e);
    m->graph_case = *c;
    m->has_graph = 1;
    return DL_OK;
}

/* One unit of timing: a call, or a replay of the graph of graph_iters calls. */
dl_status_t nccl_launch_unit(nccl_ctx_t *m, const dl_case_t *c)
{
    if (m->graph_iters > 0) {
        cudaError_t e = cudaGraphLaunch(m->graph, m->stream);
        return e == cudaSuccess ? DL_OK : nccl_cuda_fail("cudaGraphLaunch", e);
    }
    next_slice(m, c);
    ncclResult_t r = nccl_enqueue(m, c);
    m->shift = 0;
    return nccl_call_ok(m, r, c);
}
