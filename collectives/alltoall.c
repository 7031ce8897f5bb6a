/* all-to-all: block j of rank r's send buffer lands as block r of rank j's
 * receive buffer. The size is one rank's send buffer; busbw factor (n-1)/n. */
#include "common.h"

static void counts(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *o)
{
    (void)rank;
    size_t per = dl_per_rank(bytes, esize, nranks);
    *o = (dl_counts_t){.send_count = per * nranks, .recv_count = per * nranks,
                       .param_count = per, .bytes = per * nranks * esize,
                       .inplace_send_offset = 0};
}


const dl_coll_t dl_coll_alltoall = {"alltoall", DL_COLL_ALLTOALL, 0, 0, dl_factor_nm1_n, counts};
