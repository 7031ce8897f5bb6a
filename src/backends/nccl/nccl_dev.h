/* Device helpers of the nccl backend (nccl_dev.cu), callable from C. Not an
 * interface of the backends folder: only nccl.c includes it. */
#ifndef DL_NCCL_DEV_H
#define DL_NCCL_DEV_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a dtype is laid out on the device (mirrors dl_dtype_t). */
typedef struct {
    int dtype;       /* dl_dtype_t */
    int narrow, is_unsigned, is_float, int_avg;
    double tol;      /* dl_match_tolerance */
} dl_dev_type_t;

/* Writes rank's send pattern (count elements) into buf. */
cudaError_t dl_dev_fill(void *buf, const dl_dev_type_t *t, int reduces, int op, int rank,
                        size_t count, cudaStream_t s);

/* Counts result elements that differ from what the collective defines
 * (d_wrong[0]) and keeps the lowest wrong index (d_wrong[1], preset ~0).
 * table: the reduction of the pattern at each residue mod 64 (reductions). */
typedef struct {
    int coll, rank, nranks, root, op;
    size_t per, count;
    const size_t *voff; /* device copy of dl_alltoallv_offsets (alltoallv), else NULL */
    double table[64];
} dl_dev_check_t;
cudaError_t dl_dev_check(const void *buf, const dl_dev_type_t *t, const dl_dev_check_t *c,
                         unsigned long long *d_wrong, cudaStream_t s);

/* A kernel that spins until *flag is set or `seconds` pass: the injected hang. */
cudaError_t dl_dev_spin(volatile int *flag, double seconds, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
