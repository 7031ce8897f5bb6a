/* analysis units: the verdict rule at its edges, spreads, format detection
 * by content, and pairing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/analysis.h"

static void verdict_rule(void **state)
{
    (void)state;
    /* Within the threshold: unchanged, whatever the spread. */
    assert_int_equal(dl_an_verdict(0.05, 0.05, 5.0, 0.1), DL_V_UNCHANGED);
    assert_int_equal(dl_an_verdict(-0.04, 0.05, 5.0, 0.1), DL_V_UNCHANGED);
    /* Past it, but the difference inside the combined spread: noise. */
    assert_int_equal(dl_an_verdict(0.20, 0.05, 2.0, 2.0), DL_V_NOISE);
    assert_int_equal(dl_an_verdict(-0.20, 0.05, 2.0, 3.0), DL_V_NOISE);
    /* Past both: regression or improvement. */
    assert_int_equal(dl_an_verdict(0.20, 0.05, 2.01, 2.0), DL_V_REGRESSION);
    assert_int_equal(dl_an_verdict(-0.20, 0.05, 9.0, 2.0), DL_V_IMPROVEMENT);
    /* No spread known (nccl-tests): the threshold alone. */
    assert_int_equal(dl_an_verdict(0.20, 0.05, 0.001, NAN), DL_V_REGRESSION);
}

static void spread_from_stdev(void **state)
{
    (void)state;
    dl_row_t r;
    dl_an_row_init(&r);
    assert_true(isnan(dl_an_spread(&r)));
    r.stdev_us = 10;
    r.iterations = 101;
    assert_float_equal(dl_an_spread(&r), dl_t95(100) * 10 / sqrt(101.0), 1e-9);
    r.ci95_us = 0.5;
    assert_float_equal(dl_an_spread(&r), 0.5, 1e-12);
}

static const char text_log[] =
    "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n"
    "# Collective test starting: all_gather_perf\n"
    "#  Rank  0 Group  0 Pid 1 on nodeA device  0 [0000:00:06] NVIDIA H200\n"
    "#  Rank  1 Group  0 Pid 2 on nodeB device  0 [0000:00:07] NVIDIA H200\n"
    "NCCL INFO some line 1 2 3\n"
    "        1024           128     half    none      -1    10.00    0.10    0.05      0"
    "     9.00    0.11    0.06    N/A\n";

static void detects_by_content(void **state)
{
    (void)state;
    dl_run_t r;
    dl_log_set_mute(1);
    assert_int_equal(dl_an_parse(text_log, sizeof(text_log) - 1, "x.json", &r), DL_OK);
    assert_int_equal(r.fmt, DL_FMT_NCCLT_TEXT);
    assert_int_equal(r.nrows, 2);
    assert_int_equal(r.ranks, 2);
    assert_int_equal(r.nhosts, 2);
    assert_string_equal(r.hosts, "nodeA,nodeB");
    assert_string_equal(r.nccl, "2.28.9");
    assert_string_equal(r.rows[0].collective, "allgather");
    assert_string_equal(r.rows[0].dtype, "float16");
    assert_string_equal(r.rows[1].placement, "in");
    assert_true(isnan(r.rows[1].wrong));
    assert_true(isnan(dl_an_spread(&r.rows[0])));
    dl_an_free(&r);
    static const char *const bad[] = {"", "{", "{\"schema\":2,\"profiles\":[]}", "1 2 3\n", "[]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(dl_an_parse(bad[i], strlen(bad[i]), "bad", &r), DL_ERR_INPUT);
    dl_log_set_mute(0);
}

static void row(dl_run_t *r, const char *prof, uint64_t bytes, double t)
{
    dl_row_t x;
    dl_an_row_init(&x);
    snprintf(x.profile, sizeof(x.profile), "%s", prof);
    snprintf(x.collective, sizeof(x.collective), "allreduce");
    snprintf(x.dtype, sizeof(x.dtype), "float32");
    snprintf(x.op, sizeof(x.op), "sum");
    snprintf(x.placement, sizeof(x.placement), "out");
    x.bytes = bytes;
    x.ranks = 8;
    x.time_us = t;
    x.ci95_us = 0.01 * t;
    x.busbw = x.algbw = (double)bytes / t / 1e3;
    assert_int_equal(dl_an_add_row(r, &x), DL_OK);
}

static void pairs_one_profile_each(void **state)
{
    (void)state;
    dl_run_t b = {0}, n = {0};
    for (int i = 0; i < 4; i++) {
        row(&b, "mpi", 1024u << i, 10.0 + i);
        row(&n, "nccl-tests", 1024u << (3 - i), i == 0 ? 20.0 : 13.0 - i); /* same but 8 KiB */
    }
    dl_cmp_opts_t o = {.threshold = 0.05, .metric = DL_M_TIME, .min_size = 1};
    dl_cmp_t c;
    assert_int_equal(dl_an_compare(&b, &n, &o, &c), DL_OK);
    assert_true(c.profiles_merged);
    assert_int_equal(c.npairs, 4);
    assert_int_equal(c.count[DL_V_REGRESSION], 1); /* 8 KiB: 13 us -> 20 us */
    assert_int_equal(c.count[DL_V_UNCHANGED], 3);
    for (size_t i = 0; i < c.npairs; i++)
        if (c.pairs[i].verdict == DL_V_REGRESSION)
            assert_int_equal(c.pairs[i].cur->bytes, 8192);
    dl_an_cmp_free(&c);
    o.min_size = 4096;
    assert_int_equal(dl_an_compare(&b, &n, &o, &c), DL_OK);
    assert_int_equal(c.npairs, 2);
    assert_int_equal(c.small, 2);
    dl_an_cmp_free(&c);
    dl_an_free(&b);
    dl_an_free(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(verdict_rule),
        cmocka_unit_test(spread_from_stdev),
        cmocka_unit_test(detects_by_content),
        cmocka_unit_test(pairs_one_profile_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
