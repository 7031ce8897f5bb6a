/* reduce-scatter: rank r ends with block r of the reduction. The size is
 * the whole (send) buffer; busbw factor (n-1)/n. */
#include "common.h"

static void counts(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *o)
{
    size_t per = dl_per_rank(bytes, esize, nranks);
    *o = (dl_counts_t){.send_count = per * nranks, .recv_count = per, .param_count = per,
                       .bytes = per * nranks * esize, .inplace_send_offset = 0,
                       .inplace_recv_offset = per * rank};
}


const dl_coll_t dl_coll_reducescatter = {"reducescatter", DL_COLL_REDUCESCATTER, 1, 0,
                                         dl_factor_nm1_n, counts};
