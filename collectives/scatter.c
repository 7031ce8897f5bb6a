/* scatter: rank r ends with block r of the root's buffer. The size is the
 * root's send buffer (as nccl-tests'); busbw factor (n-1)/n. In place, a
 * rank's result lands at its block's place in the root's layout. */
#include "common.h"

static void counts(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *o)
{
    size_t per = dl_per_rank(bytes, esize, nranks);
    *o = (dl_counts_t){.send_count = per * nranks, .recv_count = per, .param_count = per,
                       .bytes = per * nranks * esize, .inplace_send_offset = 0,
                       .inplace_recv_offset = per * rank};
}

const dl_coll_t dl_coll_scatter = {"scatter", DL_COLL_SCATTER, 0, 1, dl_factor_nm1_n, counts};
