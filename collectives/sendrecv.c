/* send/receive ring: each rank sends to rank+1 and receives from rank-1.
 * busbw factor 1 (every link carries the whole buffer once). */
#include "common.h"

static void counts(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *o)
{
    (void)nranks; (void)rank;
    size_t n = dl_whole(bytes, esize);
    *o = (dl_counts_t){.send_count = n, .recv_count = n, .param_count = n,
                       .bytes = n * esize, .inplace_send_offset = 0};
}


const dl_coll_t dl_coll_sendrecv = {"sendrecv", DL_COLL_SENDRECV, 0, 0, dl_factor_one, counts};
