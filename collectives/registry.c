/* The list of collectives, and host fill/check shared by host-buffer backends. */
#include "common.h"
#include "pattern.h"

#include <stdlib.h>
#include <string.h>

#define DL_COLL_EXTERN_(id, name) extern const dl_coll_t dl_coll_##name;
DL_COLL_LIST(DL_COLL_EXTERN_)
#define DL_COLL_ENTRY_(id, name) [DL_COLL_##id] = &dl_coll_##name,
const dl_coll_t *const dl_colls[DL_COLL_COUNT] = {DL_COLL_LIST(DL_COLL_ENTRY_)};
#define DL_COLL_NAME_(id, name) [DL_COLL_##id] = #name,
const char *const dl_coll_names[DL_COLL_COUNT] = {DL_COLL_LIST(DL_COLL_NAME_)};

const dl_coll_t *dl_coll_find(const char *name)
{
    for (int i = 0; i < DL_COLL_COUNT; i++)
        if (strcmp(dl_colls[i]->name, name) == 0)
            return dl_colls[i];
    return NULL;
}

size_t dl_counts_buffer_elems(const dl_counts_t *cnt, dl_place_t place, int recv)
{
    if (place == DL_PLACE_IN)
        return recv ? (cnt->send_count > cnt->recv_count ? cnt->send_count : cnt->recv_count) : 0;
    return recv ? cnt->recv_count : cnt->send_count;
}

void dl_fill_host(const dl_coll_t *c, dl_dtype_t dt, dl_op_t op, int rank,
                  const dl_counts_t *cnt, dl_place_t place, void *sendbuf, void *recvbuf)
{
    size_t es = dl_dtype_size(dt);
    /* Poison the receive region so an element nothing wrote is counted wrong. */
    size_t poison = dl_counts_buffer_elems(cnt, place, 1) * es;
    if (poison) /* a rank that receives nothing may have no buffer at all */
        memset(recvbuf, 0xA5, poison);
    char *dst = place == DL_PLACE_IN ? (char *)recvbuf + cnt->inplace_send_offset * es
                                     : (char *)sendbuf;
    for (size_t i = 0; i < cnt->send_count; i++)
        dl_value_store(dt, dst, i, dl_pattern(dt, c->has_op, op, rank, i));
}

_Static_assert(DL_PO_AVG == (int)DL_OP_AVG, "pattern.h op ids out of step");

int dl_coll_expected(const dl_coll_t *c, dl_dtype_t dt, dl_op_t op, int rank, int nranks,
                     int root, const dl_counts_t *cnt, size_t i, double *value)
{
    int src_rank = 0;
    size_t src = 0;
    size_t *voff = c->id == DL_COLL_ALLTOALLV
                       ? dl_alltoallv_offsets(cnt->requested, dl_dtype_size(dt), nranks, rank)
                       : NULL;
    if (c->id == DL_COLL_ALLTOALLV && !voff)
        return 0;
    int how = dl_expected_source((int)c->id, rank, nranks, root, cnt->param_count, i, voff,
                                 &src_rank, &src);
    free(voff);
    if (how == 1)
        *value = dl_pattern_reduced(dt, op, nranks, src);
    else if (how == 2)
        *value = dl_pattern(dt, 0, op, src_rank, src);
    return how != 0;
}

uint64_t dl_check_host(const dl_coll_t *c, dl_dtype_t dt, dl_op_t op, int rank,
                       int nranks, int root, const dl_counts_t *cnt, dl_place_t place,
                       const void *recvbuf)
{
    if (place == DL_PLACE_IN)
        recvbuf = (const char *)recvbuf + cnt->inplace_recv_offset * dl_dtype_size(dt);
    /* Reductions repeat with period DL_PATTERN_PERIOD in the global index:
     * fold over the ranks once per residue, not once per element. */
    double table[DL_PATTERN_PERIOD];
    if (c->has_op)
        for (size_t k = 0; k < DL_PATTERN_PERIOD; k++)
            table[k] = dl_pattern_reduced(dt, op, nranks, k);
    size_t *voff = c->id == DL_COLL_ALLTOALLV
                       ? dl_alltoallv_offsets(cnt->requested, dl_dtype_size(dt), nranks, rank)
                       : NULL;
    if (c->id == DL_COLL_ALLTOALLV && !voff)
        return cnt->recv_count; /* out of memory: nothing could be checked */
    uint64_t wrong = 0;
    for (size_t i = 0; i < cnt->recv_count; i++) {
        int src_rank = 0;
        size_t src = 0;
        int how = dl_expected_source((int)c->id, rank, nranks, root, cnt->param_count, i, voff,
                                     &src_rank, &src);
        if (how == 0)
            break; /* nothing defined on this rank */
        double want = how == 1 ? table[src % DL_PATTERN_PERIOD]
                               : dl_pattern(dt, 0, op, src_rank, src);
        if (!dl_value_matches(dt, op, nranks, dl_value_load(dt, recvbuf, i), want))
            wrong++;
    }
    free(voff);
    return wrong;
}
