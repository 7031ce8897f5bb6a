/* all-gather: every rank ends with all ranks' blocks, in rank order.
 * The size is the gathered (receive) buffer; busbw factor (n-1)/n. */
#include "common.h"

static void counts(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *o)
{
    size_t per = dl_per_rank(bytes, esize, nranks);
    *o = (dl_counts_t){.send_count = per, .recv_count = per * nranks, .param_count = per,
                       .bytes = per * nranks * esize, .inplace_send_offset = per * rank};
}


const dl_coll_t dl_coll_allgather = {"allgather", DL_COLL_ALLGATHER, 0, 0, dl_factor_nm1_n, counts};
