/* collectives: bus-bandwidth factors, counts and rounding, the fill pattern
 * and the host check (against a simulation of each collective written here),
 * and the half-precision conversions. */
#include "unit_helpers.h"

#include <stdint.h>

#include "collectives.h"
#include "util/util.h"

static const int rank_counts[] = {1, 2, 3, 4, 8};

static void busbw_factors(void **state)
{
    (void)state;
    /* nccl-tests: allreduce 2(n-1)/n; allgather, reducescatter, alltoall
     * (n-1)/n; broadcast, reduce, sendrecv 1. */
    static const struct {
        dl_coll_id_t id;
        double f[4]; /* n = 1, 2, 4, 8 */
    } want[] = {
        {DL_COLL_ALLREDUCE, {0, 1, 1.5, 1.75}},      {DL_COLL_ALLGATHER, {0, 0.5, 0.75, 0.875}},
        {DL_COLL_REDUCESCATTER, {0, 0.5, 0.75, 0.875}}, {DL_COLL_ALLTOALL, {0, 0.5, 0.75, 0.875}},
        {DL_COLL_BROADCAST, {1, 1, 1, 1}},           {DL_COLL_REDUCE, {1, 1, 1, 1}},
        {DL_COLL_SENDRECV, {1, 1, 1, 1}},
        {DL_COLL_GATHER, {0, 0.5, 0.75, 0.875}},     {DL_COLL_SCATTER, {0, 0.5, 0.75, 0.875}},
        {DL_COLL_ALLTOALLV, {0, 0.5, 0.75, 0.875}},
    };
    static const int ns[] = {1, 2, 4, 8};
    assert_int_equal(DL_ARRAY_SIZE(want), DL_COLL_COUNT); /* a new collective needs a row */
    for (size_t c = 0; c < DL_ARRAY_SIZE(want); c++)
        for (int k = 0; k < 4; k++)
            assert_near(dl_colls[want[c].id]->busbw_factor(ns[k]), want[c].f[k], 1e-15);
}

static void registry(void **state)
{
    (void)state;
    for (int c = 0; c < DL_COLL_COUNT; c++) {
        assert_int_equal(dl_colls[c]->id, c);
        assert_string_equal(dl_colls[c]->name, dl_coll_names[c]);
        assert_ptr_equal(dl_coll_find(dl_coll_names[c]), dl_colls[c]);
    }
    assert_null(dl_coll_find("allreduce2"));
    assert_true(dl_colls[DL_COLL_ALLREDUCE]->has_op && dl_colls[DL_COLL_REDUCE]->has_root);
    assert_false(dl_colls[DL_COLL_ALLGATHER]->has_op);
    static const size_t sizes[DL_DT_COUNT] = {4, 2, 2, 8, 4, 1, 1, 8, 4, 8, 1, 1};
    for (int d = 0; d < DL_DT_COUNT; d++)
        assert_int_equal(dl_dtype_size((dl_dtype_t)d), sizes[d]);
}

static dl_counts_t counts(dl_coll_id_t id, uint64_t bytes, size_t es, int n, int rank)
{
    dl_counts_t k;
    memset(&k, 0x5a, sizeof(k)); /* every field must be set */
    dl_colls[id]->counts(bytes, es, n, rank, &k);
    return k;
}

/* The documented rounding: a size is rounded down to whole elements (per
 * rank where the collective splits the buffer), never below one element per
 * rank; `bytes` is what is really moved. */
static void counts_whole_buffer(void **state)
{
    (void)state;
    static const dl_coll_id_t ids[] = {DL_COLL_ALLREDUCE, DL_COLL_BROADCAST, DL_COLL_REDUCE,
                                       DL_COLL_SENDRECV};
    for (size_t c = 0; c < DL_ARRAY_SIZE(ids); c++) {
        dl_counts_t k = counts(ids[c], 1024, 4, 4, 1);
        assert_int_equal(k.send_count, 256);
        assert_int_equal(k.recv_count, 256);
        assert_int_equal(k.param_count, 256);
        assert_int_equal(k.bytes, 1024);
        assert_int_equal(k.inplace_send_offset, 0);
        assert_int_equal(k.inplace_recv_offset, 0);
        k = counts(ids[c], 10, 4, 4, 0); /* 2.5 floats -> 2 */
        assert_int_equal(k.param_count, 2);
        assert_int_equal(k.bytes, 8);
        k = counts(ids[c], 3, 8, 4, 0); /* less than one double -> one */
        assert_int_equal(k.param_count, 1);
        assert_int_equal(k.bytes, 8);
        k = counts(ids[c], 7, 1, 8, 0); /* int8: any size is whole */
        assert_int_equal(k.param_count, 7);
        assert_int_equal(k.bytes, 7);
    }
}

static void counts_split_buffer(void **state)
{
    (void)state;
    for (int r = 0; r < 4; r++) {
        /* allgather: the size is the gathered buffer; 100 B of float32 on 4
         * ranks = 6.25 floats per rank -> 6. */
        dl_counts_t k = counts(DL_COLL_ALLGATHER, 100, 4, 4, r);
        assert_int_equal(k.send_count, 6);
        assert_int_equal(k.recv_count, 24);
        assert_int_equal(k.param_count, 6);
        assert_int_equal(k.bytes, 96);
        assert_int_equal(k.inplace_send_offset, 6 * r); /* own block, in place */
        assert_int_equal(k.inplace_recv_offset, 0);
        /* reducescatter: the size is the input; rank r keeps block r. */
        k = counts(DL_COLL_REDUCESCATTER, 100, 4, 4, r);
        assert_int_equal(k.send_count, 24);
        assert_int_equal(k.recv_count, 6);
        assert_int_equal(k.param_count, 6);
        assert_int_equal(k.bytes, 96);
        assert_int_equal(k.inplace_send_offset, 0);
        assert_int_equal(k.inplace_recv_offset, 6 * r);
        /* gather: as all-gather, to the root alone; scatter: as
         * reduce-scatter's layout, from the root. */
        k = counts(DL_COLL_GATHER, 100, 4, 4, r);
        assert_int_equal(k.send_count, 6);
        assert_int_equal(k.recv_count, 24);
        assert_int_equal(k.bytes, 96);
        assert_int_equal(k.inplace_send_offset, 6 * r);
        k = counts(DL_COLL_SCATTER, 100, 4, 4, r);
        assert_int_equal(k.send_count, 24);
        assert_int_equal(k.recv_count, 6);
        assert_int_equal(k.param_count, 6);
        assert_int_equal(k.inplace_recv_offset, 6 * r);
        /* alltoall: the size is one rank's send buffer, n blocks of it. */
        k = counts(DL_COLL_ALLTOALL, 100, 4, 4, r);
        assert_int_equal(k.send_count, 24);
        assert_int_equal(k.recv_count, 24);
        assert_int_equal(k.param_count, 6);
        assert_int_equal(k.bytes, 96);
    }
    /* 8 B of float32 over 4 ranks is half a float each: one element per rank,
     * so the row moves 16 B, more than asked (bytes_requested keeps the 8). */
    static const dl_coll_id_t ids[] = {DL_COLL_ALLGATHER, DL_COLL_REDUCESCATTER, DL_COLL_ALLTOALL};
    for (size_t c = 0; c < DL_ARRAY_SIZE(ids); c++) {
        dl_counts_t k = counts(ids[c], 8, 4, 4, 3);
        assert_int_equal(k.param_count, 1);
        assert_int_equal(k.bytes, 16);
        k = counts(ids[c], 64 * 1024, 2, 8, 3); /* divisible: exact */
        assert_int_equal(k.param_count, 4096);
        assert_int_equal(k.bytes, 64 * 1024);
        k = counts(ids[c], 1, 1, 1, 0);
        assert_int_equal(k.param_count, 1);
        assert_int_equal(k.bytes, 1);
    }
}

/* ---- fill and check against a host simulation of every collective ---- */

/* The reduction a correct library computes, in double (the pattern's
 * partial results are exact), stored in the dtype. */
static double reduce_ref(dl_op_t op, const double *v, int n)
{
    double acc = v[0];
    for (int r = 1; r < n; r++) {
        switch (op) {
        case DL_OP_SUM: case DL_OP_AVG: acc += v[r]; break;
        case DL_OP_PROD: acc *= v[r]; break;
        case DL_OP_MIN: acc = v[r] < acc ? v[r] : acc; break;
        case DL_OP_MAX: acc = v[r] > acc ? v[r] : acc; break;
        default: fail();
        }
    }
    return op == DL_OP_AVG ? acc / n : acc;
}

typedef struct {
    const dl_coll_t *c;
    dl_dtype_t dt;
    dl_op_t op;
    dl_place_t place;
    int n, root;
    dl_counts_t k[8];
    char *send[8], *recv[8];
    double *sent[8]; /* each rank's send data as the collective sees it */
} sim_t;

static void sim_fill(sim_t *s, uint64_t bytes)
{
    size_t es = dl_dtype_size(s->dt);
    for (int r = 0; r < s->n; r++) {
        s->c->counts(bytes, es, s->n, r, &s->k[r]);
        size_t ns = dl_counts_buffer_elems(&s->k[r], s->place, 0);
        size_t nr = dl_counts_buffer_elems(&s->k[r], s->place, 1);
        s->send[r] = calloc(ns + 1, es);
        s->recv[r] = calloc(nr + 1, es);
        dl_fill_host(s->c, s->dt, s->op, r, &s->k[r], s->place, s->send[r], s->recv[r]);
        const char *src = s->place == DL_PLACE_IN
                              ? s->recv[r] + s->k[r].inplace_send_offset * es : s->send[r];
        s->sent[r] = calloc(s->k[r].send_count, sizeof(double));
        for (size_t i = 0; i < s->k[r].send_count; i++)
            s->sent[r][i] = dl_value_load(s->dt, src, i);
    }
}

/* Writes what the collective leaves in rank r's result region. Returns 0
 * when the collective defines nothing there (reduce, non-root). */
static int sim_result(sim_t *s, int r)
{
    size_t es = dl_dtype_size(s->dt);
    const dl_counts_t *k = &s->k[r];
    char *out = s->recv[r] + (s->place == DL_PLACE_IN ? k->inplace_recv_offset * es : 0);
    size_t per = k->param_count;
    double v[8];
    if (s->c->id == DL_COLL_ALLTOALLV) { /* source by source, each block packed in rank order */
        size_t es_ = dl_dtype_size(s->dt), i = 0;
        for (int j = 0; j < s->n; j++) {
            size_t from = 0, cnt = dl_alltoallv_count(j, r, s->n, k->requested, es_);
            for (int q = 0; q < r; q++)
                from += dl_alltoallv_count(j, q, s->n, k->requested, es_);
            for (size_t e = 0; e < cnt; e++, i++)
                dl_value_store(s->dt, out, i, s->sent[j][from + e]);
        }
        assert_int_equal(i, k->recv_count);
        return 1;
    }
    for (size_t i = 0; i < k->recv_count; i++) {
        double x;
        switch (s->c->id) {
        case DL_COLL_ALLREDUCE: case DL_COLL_REDUCE:
            if (s->c->id == DL_COLL_REDUCE && r != s->root)
                return 0;
            for (int q = 0; q < s->n; q++)
                v[q] = s->sent[q][i];
            x = reduce_ref(s->op, v, s->n);
            break;
        case DL_COLL_REDUCESCATTER:
            for (int q = 0; q < s->n; q++)
                v[q] = s->sent[q][(size_t)r * per + i];
            x = reduce_ref(s->op, v, s->n);
            break;
        case DL_COLL_ALLGATHER: x = s->sent[i / per][i % per]; break;
        case DL_COLL_ALLTOALL: x = s->sent[i / per][(size_t)r * per + i % per]; break;
        case DL_COLL_BROADCAST: x = s->sent[s->root][i]; break;
        case DL_COLL_SENDRECV: x = s->sent[(r - 1 + s->n) % s->n][i]; break;
        case DL_COLL_GATHER:
            if (r != s->root)
                return 0;
            x = s->sent[i / per][i % per];
            break;
        case DL_COLL_SCATTER: x = s->sent[s->root][(size_t)r * per + i]; break;
        default: fail(); return 0;
        }
        dl_value_store(s->dt, out, i, x);
    }
    return 1;
}

static uint64_t sim_check(sim_t *s, int r)
{
    return dl_check_host(s->c, s->dt, s->op, r, s->n, s->root, &s->k[r], s->place, s->recv[r]);
}

static void sim_free(sim_t *s)
{
    for (int r = 0; r < s->n; r++) {
        free(s->send[r]);
        free(s->recv[r]);
        free(s->sent[r]);
    }
}

/* One (collective, dtype, op, placement, ranks, size): every rank's result
 * checks clean; one corrupted element is exactly one wrong; an untouched
 * (poisoned) result region is all wrong. */
static void sim_case(const dl_coll_t *c, dl_dtype_t dt, dl_op_t op, dl_place_t place, int n,
                     uint64_t bytes)
{
    sim_t s = {.c = c, .dt = dt, .op = op, .place = place, .n = n,
               .root = c->has_root ? n - 1 : -1};
    sim_fill(&s, bytes);
    size_t es = dl_dtype_size(dt);
    for (int r = 0; r < n; r++) {
        /* Before the collective runs, the result region is poison. */
        uint64_t before = sim_check(&s, r);
        int defined = sim_result(&s, r);
        uint64_t w = sim_check(&s, r);
        /* fp8's tolerance (n ulps, relative) is wide enough at 8 ranks to
         * accept the poison; the other dtypes must reject every element. */
        int poison_shows = place == DL_PLACE_OUT && !dl_dtype_is_narrow(dt);
        if (w != 0 || (defined && poison_shows && before != s.k[r].recv_count)) {
            print_error("%s %s %s %s n=%d rank=%d bytes=%llu: %llu wrong after, %llu of %zu "
                        "before\n", c->name, dl_dtype_names[dt], dl_op_names[op],
                        place == DL_PLACE_IN ? "in" : "out", n, r, (unsigned long long)bytes,
                        (unsigned long long)w, (unsigned long long)before, s.k[r].recv_count);
            fail();
        }
        if (!defined)
            continue;
        char *out = s.recv[r] + (place == DL_PLACE_IN ? s.k[r].inplace_recv_offset * es : 0);
        size_t at = s.k[r].recv_count / 2;
        double good = dl_value_load(dt, out, at);
        dl_value_store(dt, out, at, good == 77 ? 78 : 77);
        w = sim_check(&s, r);
        if (w != 1) {
            print_error("%s %s %s n=%d rank=%d: one corrupt element counted %llu wrong\n",
                        c->name, dl_dtype_names[dt], dl_op_names[op], n, r,
                        (unsigned long long)w);
            fail();
        }
        dl_value_store(dt, out, at, good);
    }
    sim_free(&s);
}

static void fill_check_all(void **state)
{
    (void)state;
    /* Sizes: below one element per rank, not divisible, a few periods. */
    static const uint64_t sizes[] = {1, 100, 1000, 4096};
    size_t cases = 0;
    for (int c = 0; c < DL_COLL_COUNT; c++)
        for (int dt = 0; dt < DL_DT_COUNT; dt++)
            for (int op = 0; op < DL_OP_COUNT; op++) {
                if (!dl_colls[c]->has_op && op != DL_OP_SUM)
                    continue;
                for (size_t k = 0; k < DL_ARRAY_SIZE(rank_counts); k++)
                    for (size_t z = 0; z < DL_ARRAY_SIZE(sizes); z++)
                        for (int pl = 0; pl < 2; pl++, cases++)
                            sim_case(dl_colls[c], (dl_dtype_t)dt, (dl_op_t)op,
                                     (dl_place_t)pl, rank_counts[k], sizes[z]);
            }
    assert_true(cases > 1000);
}

/* A block from the wrong rank must show: moving collectives' patterns differ
 * between ranks. */
static void swapped_blocks_detected(void **state)
{
    (void)state;
    sim_t s = {.c = dl_colls[DL_COLL_ALLGATHER], .dt = DL_DT_FLOAT32, .op = DL_OP_SUM,
               .place = DL_PLACE_OUT, .n = 4, .root = -1};
    sim_fill(&s, 4 * 4 * 16);
    assert_int_equal(sim_result(&s, 0), 1);
    float *f = (float *)s.recv[0];
    for (int i = 0; i < 16; i++) { /* swap blocks 1 and 2 */
        float t = f[16 + i];
        f[16 + i] = f[32 + i];
        f[32 + i] = t;
    }
    assert_int_equal(sim_check(&s, 0), 32);
    sim_free(&s);
}

/* The pattern's reduced value is the reduction of its parts. */
static void pattern_reduced(void **state)
{
    (void)state;
    for (int dt = 0; dt < DL_DT_COUNT; dt++)
        for (int op = 0; op < DL_OP_COUNT; op++)
            for (int n = 1; n <= 256; n *= 2)
                for (size_t i = 0; i < 2 * DL_PATTERN_PERIOD; i++) {
                    double v[256];
                    for (int r = 0; r < n; r++) {
                        v[r] = dl_pattern((dl_dtype_t)dt, 1, (dl_op_t)op, r, i);
                        assert_true(v[r] >= -1 && v[r] <= 100);
                    }
                    double acc = v[0];
                    for (int r = 1; r < n; r++)
                        acc = op == DL_OP_PROD ? acc * v[r]
                              : op == DL_OP_MIN ? fmin(acc, v[r])
                              : op == DL_OP_MAX ? fmax(acc, v[r]) : acc + v[r];
                    if (op == DL_OP_AVG)
                        acc /= n;
                    assert_near(dl_pattern_reduced((dl_dtype_t)dt, (dl_op_t)op, n, i), acc, 0);
                    /* Expected values repeat with the declared period. */
                    assert_near(dl_pattern_reduced((dl_dtype_t)dt, (dl_op_t)op, n, i),
                                dl_pattern_reduced((dl_dtype_t)dt, (dl_op_t)op, n,
                                                   i % DL_PATTERN_PERIOD), 0);
                }
}

/* ---- half precision ---- */

static void f16_round_trip(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = dl_f16_to_f32((uint16_t)h);
        int nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
        if (nan) {
            assert_true(isnan(f));
            assert_true(isnan(dl_f16_to_f32(dl_f32_to_f16(f))));
            continue;
        }
        if (dl_f32_to_f16(f) != h) {
            print_error("f16 0x%04x -> %g -> 0x%04x\n", h, f, dl_f32_to_f16(f));
            fail();
        }
    }
    assert_int_equal(dl_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(dl_f32_to_f16(-2.0f), 0xc000);
    assert_int_equal(dl_f32_to_f16(65504.0f), 0x7bff);      /* largest finite */
    assert_int_equal(dl_f32_to_f16(65520.0f), 0x7c00);      /* rounds up to inf */
    assert_int_equal(dl_f32_to_f16(1e6f), 0x7c00);
    assert_int_equal(dl_f32_to_f16(0x1p-24f), 0x0001);      /* smallest subnormal */
    assert_int_equal(dl_f32_to_f16(0x1p-26f), 0x0000);      /* underflows to zero */
    assert_int_equal(dl_f32_to_f16(1.0f + 0x1p-11f), 0x3c00); /* tie to even: down */
    assert_int_equal(dl_f32_to_f16(1.0f + 0x3p-11f), 0x3c02); /* tie to even: up */
    assert_int_equal(dl_f32_to_f16(1.0f + 0x1p-12f), 0x3c00);
    assert_int_equal(dl_f32_to_f16(-0.0f), 0x8000);
}

static void bf16_round_trip(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = dl_bf16_to_f32((uint16_t)h);
        if (isnan(f)) {
            assert_true(isnan(dl_bf16_to_f32(dl_f32_to_bf16(f))));
            continue;
        }
        if (dl_f32_to_bf16(f) != h) {
            print_error("bf16 0x%04x -> %g -> 0x%04x\n", h, f, dl_f32_to_bf16(f));
            fail();
        }
    }
    assert_int_equal(dl_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(dl_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);  /* tie to even: down */
    assert_int_equal(dl_f32_to_bf16(1.0f + 0x3p-8f), 0x3f82);  /* tie to even: up */
    assert_int_equal(dl_f32_to_bf16(256.0f), 0x4380);
    assert_true(isnan(dl_bf16_to_f32(dl_f32_to_bf16(NAN))));
}

/* Every value the pattern uses survives a store and load in every dtype. */
static void pattern_values_exact(void **state)
{
    (void)state;
    for (int dt = 0; dt < DL_DT_COUNT; dt++) {
        int fp8 = dt == DL_DT_FP8E4M3 || dt == DL_DT_FP8E5M2;
        int lo = dt == DL_DT_UINT8 || dt == DL_DT_UINT32 || dt == DL_DT_UINT64 ? 0 : -1;
        for (int v = lo; v <= (fp8 ? 8 : 100); v++) {
            unsigned char buf[16];
            dl_value_store((dl_dtype_t)dt, buf, 1, v);
            assert_near(dl_value_load((dl_dtype_t)dt, buf, 1), v, 0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(busbw_factors),         cmocka_unit_test(registry),
        cmocka_unit_test(counts_whole_buffer),   cmocka_unit_test(counts_split_buffer),
        cmocka_unit_test(fill_check_all),        cmocka_unit_test(swapped_blocks_detected),
        cmocka_unit_test(pattern_reduced),       cmocka_unit_test(f16_round_trip),
        cmocka_unit_test(bf16_round_trip),       cmocka_unit_test(pattern_values_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
