/* The nccl backend's buffers: allocated once at the plan's largest case,
 * registered with the communicator as nccl-tests' -R does. */
#include "nccl.h"

#include <stdlib.h>

/* -R 1 registers the send and receive buffers with the communicator
 * (ncclCommRegister); -R 2 allocates them with ncclMemAlloc and registers
 * them as symmetric windows (ncclCommWindowRegister, NCCL 2.27+: a
 * collective step, so every rank allocates alike: once, at the plan's
 * largest size). The scratch copy of in-place point-to-point is not. */
/* Before the communicator goes (fini), or the buffers do. */
void nccl_deregister(nccl_ctx_t *m)
{
    for (int i = 0; i < 2; i++) {
        if (m->reg_handle[i] && m->comm)
            ncclCommDeregister(m->comm, m->reg_handle[i]);
        m->reg_handle[i] = NULL;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
        if (m->win[i] && m->comm)
            ncclCommWindowDeregister(m->comm, m->win[i]);
        m->win[i] = NULL;
#endif
    }
}

void nccl_free_buffers(nccl_ctx_t *m)
{
    void **b[2] = {&m->send, &m->recv};
    nccl_deregister(m);
    for (int i = 0; i < 2; i++) {
        if (m->reg == 2)
            ncclMemFree(*b[i]);
        else
            cudaFree(*b[i]);
        *b[i] = NULL;
    }
    cudaFree(m->scratch);
    m->scratch = NULL;
    m->cap = m->scratch_cap = 0;
}

static int alloc_buffers(nccl_ctx_t *m, size_t bytes)
{
    nccl_free_buffers(m);
    void **b[2] = {&m->send, &m->recv};
    for (int i = 0; i < 2; i++) {
        int ok;
        if (m->reg == 2)
            ok = ncclMemAlloc(b[i], bytes) == ncclSuccess;
        else
            ok = cudaMalloc(b[i], bytes) == cudaSuccess;
        if (ok && m->reg == 1)
            ok = nccl_ok(m, ncclCommRegister(m->comm, *b[i], bytes, &m->reg_handle[i]),
                         "ncclCommRegister") == DL_OK;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
        if (ok && m->reg == 2)
            ok = nccl_settled(m, ncclCommWindowRegister(m->comm, *b[i], bytes, &m->win[i],
                                                        NCCL_WIN_COLL_SYMMETRIC),
                              "ncclCommWindowRegister") == DL_OK;
#endif
        if (!ok) {
            cudaGetLastError(); /* not sticky: clear it */
            nccl_free_buffers(m);
            return 0;
        }
    }
    m->cap = bytes;
    return 1;
}

/* Buffers for the largest case at once, so a sweep of growing sizes does
 * not free and allocate again at every step; where that much does not fit,
 * what this case needs (the larger cases then fail on their own). The
 * scratch copy only in-place all-to-all and send/receive need comes when
 * such a case does. */
dl_status_t nccl_ensure(nccl_ctx_t *m, size_t bytes, int scratch)
{
    if (m->reg == 2 && bytes > m->cap && m->cap) { /* a window is every rank's step: no regrowth */
        dl_err("rank %d: -R 2 registers the buffers once, at %zu bytes; this case needs %zu "
               "(raise -e)", m->rank, m->cap, bytes);
        return DL_ERR_USAGE;
    }
    if (bytes > m->cap && !(m->cap_hint > bytes && alloc_buffers(m, m->cap_hint)) &&
        !alloc_buffers(m, bytes)) {
        dl_err("rank %d: cannot allocate 2 x %zu bytes on GPU %d", m->rank, bytes, m->device);
        return DL_ERR_NOMEM;
    }
    if (!scratch || bytes <= m->scratch_cap)
        return DL_OK;
    cudaFree(m->scratch);
    m->scratch_cap = 0;
    if (cudaMalloc(&m->scratch, m->cap) != cudaSuccess) {
        cudaGetLastError();
        m->scratch = NULL;
        dl_err("rank %d: cannot allocate a third buffer of %zu bytes on GPU %d", m->rank, m->cap,
               m->device);
        return DL_ERR_NOMEM;
    }
    m->scratch_cap = m->cap;
    return DL_OK;
}
