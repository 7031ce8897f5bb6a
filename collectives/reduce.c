/* reduce: the root ends with the reduction; other ranks' receive buffers are
 * not defined. busbw factor 1. */
#include "common.h"

static void counts(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *o)
{
    (void)nranks; (void)rank;
    size_t n = dl_whole(bytes, esize);
    *o = (dl_counts_t){.send_count = n, .recv_count = n, .param_count = n,
                       .bytes = n * esize, .inplace_send_offset = 0};
}


const dl_coll_t dl_coll_reduce = {"reduce", DL_COLL_REDUCE, 1, 1, dl_factor_one, counts};
