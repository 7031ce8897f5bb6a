/* broadcast: every rank ends with the root's buffer. busbw factor 1. */
#include "common.h"

static void counts(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *o)
{
    (void)nranks; (void)rank;
    size_t n = dl_whole(bytes, esize);
    *o = (dl_counts_t){.send_count = n, .recv_count = n, .param_count = n,
                       .bytes = n * esize, .inplace_send_offset = 0};
}


const dl_coll_t dl_coll_broadcast = {"broadcast", DL_COLL_BROADCAST, 0, 1, dl_factor_one, counts};
