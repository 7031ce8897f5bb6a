/* all-reduce: every rank ends with the reduction of all send buffers.
 * busbw factor 2(n-1)/n: a ring moves each byte in and out (n-1)/n times. */
#include "common.h"

static double factor(int n) { return n > 1 ? 2.0 * (n - 1) / n : 0.0; }

static void counts(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *o)
{
    (void)nranks; (void)rank;
    size_t n = dl_whole(bytes, esize);
    *o = (dl_counts_t){.send_count = n, .recv_count = n, .param_count = n,
                       .bytes = n * esize, .inplace_send_offset = 0};
}


const dl_coll_t dl_coll_allreduce = {"allreduce", DL_COLL_ALLREDUCE, 1, 0, factor, counts};
