/* Shared by the per-collective files only (not part of the interface). */
#ifndef DL_COLL_COMMON_H
#define DL_COLL_COMMON_H
#include "collectives.h"

/* Elements per rank for a buffer of `bytes` split across nranks: rounded
 * down, at least one. */
static inline size_t dl_per_rank(uint64_t bytes, size_t esize, int nranks)
{
    size_t n = (size_t)(bytes / esize / (uint64_t)nranks);
    return n ? n : 1;
}
static inline size_t dl_whole(uint64_t bytes, size_t esize)
{
    size_t n = (size_t)(bytes / esize);
    return n ? n : 1;
}
static inline double dl_factor_one(int nranks) { (void)nranks; return 1.0; }
static inline double dl_factor_nm1_n(int nranks) { return nranks > 1 ? (double)(nranks - 1) / nranks : 0.0; }
#endif
