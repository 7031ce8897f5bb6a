/* gather: the root ends with every rank's block, in rank order; other ranks'
 * receive buffers are not defined. The size is the gathered buffer (as
 * nccl-tests'); busbw factor (n-1)/n: the root's link carries all blocks but
 * its own. In place, a rank's block already sits at its place in the root's
 * layout. */
#include "common.h"

static void counts(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *o)
{
    size_t per = dl_per_rank(bytes, esize, nranks);
    *o = (dl_counts_t){.send_count = per, .recv_count = per * nranks, .param_count = per,
                       .bytes = per * nranks * esize, .inplace_send_offset = per * rank};
}

const dl_coll_t dl_coll_gather = {"gather", DL_COLL_GATHER, 0, 1, dl_factor_nm1_n, counts};
