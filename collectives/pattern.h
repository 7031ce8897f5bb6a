/*
 * The fill pattern and where each received element comes from, as inline
 * functions that compile for the host and (under nvcc) for the device, so
 * the host check and the device check are one piece of code.
 */
#ifndef DL_PATTERN_H
#define DL_PATTERN_H

#include <math.h>
#include <stddef.h>

#ifdef __CUDACC__
#define DL_HD __host__ __device__ static inline
#else
#define DL_HD static inline
#endif

/* The collectives, in the order of their ids and of `-c all`: X(ID, name).
 * This list is the only one: it makes dl_coll_id_t (DL_COLL_ID), dl_colls[]
 * and dl_coll_names[] (registry.c, which expects a const dl_coll_t
 * dl_coll_<name> in collectives/<name>.c). */
#define DL_COLL_LIST(X)                                                               \
    X(ALLREDUCE, allreduce) X(ALLGATHER, allgather) X(BROADCAST, broadcast)           \
    X(REDUCESCATTER, reducescatter) X(ALLTOALL, alltoall) X(SENDRECV, sendrecv)        \
    X(REDUCE, reduce) X(GATHER, gather) X(SCATTER, scatter) X(ALLTOALLV, alltoallv)

#define DL_COLL_ENUM_(id, name) DL_COLL_##id,
typedef enum { DL_COLL_LIST(DL_COLL_ENUM_) DL_COLL_COUNT } dl_coll_id_t;
#undef DL_COLL_ENUM_

/* Kept in step with dl_op_t (a static assert in collectives/registry.c). */
enum { DL_PO_SUM, DL_PO_PROD, DL_PO_MIN, DL_PO_MAX, DL_PO_AVG };

/* Value rank puts at send index i. narrow: fp8 (integers exact only to 8);
 * is_unsigned: no -1 for prod. */
DL_HD double dl_pattern_value(int narrow, int is_unsigned, int reduces, int op, int rank,
                              size_t i)
{
    size_t r = (size_t)rank;
    if (!reduces)
        return (double)((i + 7u * r) % (narrow ? 8u : 101u));
    switch (op) {
    case DL_PO_SUM:
        return (double)((i + 3u * r) & 1u);
    case DL_PO_PROD:
        if (is_unsigned)
            return 1.0 + (double)((i % 64u) == (r % 64u));
        return ((i + r) % 4u == 0) ? -1.0 : 1.0;
    case DL_PO_MIN:
    case DL_PO_MAX:
        return (double)((i + 5u * r) % (narrow ? 8u : 16u));
    default: /* avg: every rank the same value, so the mean is exact */
        return (double)(i % 4u);
    }
}

/* Where result element i of `rank` comes from: the reduction at global index
 * *src_index (returns 1), the pattern of *src_rank at *src_index (returns 2),
 * or nowhere defined (returns 0: reduce and gather on a non-root rank). per
 * is the count of one rank's block (param_count: send_count of all-gather
 * and gather, recv_count of reduce-scatter and scatter, one block of
 * all-to-all). voff (all-to-all-v only, dl_alltoallv_offsets): where each
 * source's block starts in the result (n+1 entries), then where the block
 * for this rank starts in each source's send buffer (n entries). A new
 * collective adds its case here. */
DL_HD int dl_expected_source(int coll, int rank, int nranks, int root, size_t per, size_t i,
                             const size_t *voff, int *src_rank, size_t *src_index)
{
    switch (coll) {
    case DL_COLL_ALLREDUCE:
        *src_index = i;
        return 1;
    case DL_COLL_REDUCE:
        *src_index = i;
        return rank == root ? 1 : 0;
    case DL_COLL_REDUCESCATTER:
        *src_index = (size_t)rank * per + i;
        return 1;
    case DL_COLL_ALLGATHER:
        *src_rank = (int)(i / per);
        *src_index = i % per;
        return 2;
    case DL_COLL_ALLTOALL:
        *src_rank = (int)(i / per);
        *src_index = (size_t)rank * per + i % per;
        return 2;
    case DL_COLL_BROADCAST:
        *src_rank = root;
        *src_index = i;
        return 2;
    case DL_COLL_GATHER:
        *src_rank = (int)(i / per);
        *src_index = i % per;
        return rank == root ? 2 : 0;
    case DL_COLL_SCATTER:
        *src_rank = root;
        *src_index = (size_t)rank * per + i;
        return 2;
    case DL_COLL_ALLTOALLV: { /* the last source whose block starts at or before i */
        int lo = 0, hi = nranks - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (voff[mid] <= i)
                lo = mid;
            else
                hi = mid - 1;
        }
        *src_rank = lo;
        *src_index = voff[nranks + 1 + lo] + (i - voff[lo]);
        return 2;
    }
    default: /* sendrecv: from the previous rank */
        *src_rank = (rank - 1 + nranks) % nranks;
        *src_index = i;
        return 2;
    }
}

/* Whether a received value matches: exact, except where rounding is in the
 * definition (avg's 1/n on floats, fp8 sums past their exact integers):
 * tol = nranks x epsilon of the dtype there, else 0. Integer avg truncates
 * like integer division. */
DL_HD int dl_values_match(int is_float, int int_avg, double tol, double got, double want)
{
    if (got != got)
        return 0;
    if (!is_float)
        return got == (int_avg ? trunc(want) : want);
    if (got == want)
        return 1;
    /* Relative to want, with no floor: an expected 0 is exact in every form
     * of avg and sum, and a floor of 1 would let the poison of an unwritten
     * float32/float64/bfloat16 element (about -3e-16) pass as 0. */
    return tol > 0 && fabs(got - want) <= tol * fabs(want);
}

#endif
