/* analysis units: the verdict rule at its edges, spreads, format detection
 * by content, pairing, and tune's answer beside a curve. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

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
    dl_rec_row_init(&r);
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
    dl_record_t r;
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
    dl_record_free(&r);
    static const char *const bad[] = {"", "{", "{\"schema\":2,\"profiles\":[]}", "1 2 3\n", "[]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(dl_an_parse(bad[i], strlen(bad[i]), "bad", &r), DL_ERR_INPUT);
    dl_log_set_mute(0);
}

static void row(dl_record_t *r, const char *prof, uint64_t bytes, double t)
{
    dl_row_t x;
    dl_rec_row_init(&x);
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
    assert_int_equal(dl_rec_push_row(r, &x), DL_OK);
}

static void pairs_one_profile_each(void **state)
{
    (void)state;
    dl_record_t b = {0}, n = {0};
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
    dl_record_free(&b);
    dl_record_free(&n);
}

/* all-reduce reaching 90% of its 10 GB/s peak at 2 MiB: the curve says 2 MiB. */
static const char curve_run[] =
    "{\"schema\": 1, \"profiles\": [{\"name\": \"p\", \"results\": ["
    "{\"collective\": \"allreduce\", \"bytes\": 1048576, \"ranks\": 2, \"busbw_gbps\": 5,"
    " \"algbw_gbps\": 5, \"time_us\": {\"mean\": 210}},"
    "{\"collective\": \"allreduce\", \"bytes\": 2097152, \"ranks\": 2, \"busbw_gbps\": 9.5,"
    " \"algbw_gbps\": 9.5, \"time_us\": {\"mean\": 221}},"
    "{\"collective\": \"allreduce\", \"bytes\": 4194304, \"ranks\": 2, \"busbw_gbps\": 10,"
    " \"algbw_gbps\": 10, \"time_us\": {\"mean\": 420}}]}]}";

/* Caps 1, 3, 25 MiB on profiles a and b (b's 1 MiB not measured); a's and
 * b's 3 MiB within the CIs: "any of these". 3 MiB is nearest 2 MiB (log
 * scale), and a's 3 MiB the least exposed. */
static const char tune_rec[] =
    "{\"model\": {\"name\": \"m\"}, \"framework\": \"ddp\", \"backward_ms\": 10, \"candidates\": ["
    "{\"profile\": \"a\", \"bucket_cap_mb\": 1, \"exposed_us\": 300, \"comm_us\": 900,"
    " \"step_us\": 900, \"step_ci95_us\": 9, \"buckets\": [{}, {}, {}]},"
    "{\"profile\": \"a\", \"bucket_cap_mb\": 3, \"exposed_us\": 100, \"comm_us\": 800,"
    " \"step_us\": 800, \"step_ci95_us\": 15, \"buckets\": [{}, {}]},"
    "{\"profile\": \"a\", \"bucket_cap_mb\": 25, \"exposed_us\": 200, \"comm_us\": 700,"
    " \"step_us\": 700, \"step_ci95_us\": 7, \"buckets\": [{}]},"
    "{\"profile\": \"b\", \"bucket_cap_mb\": 1, \"measured\": false, \"buckets\": [{}, {}, {}]},"
    "{\"profile\": \"b\", \"bucket_cap_mb\": 3, \"exposed_us\": 120, \"comm_us\": 810,"
    " \"step_us\": 810, \"step_ci95_us\": 10, \"buckets\": [{}, {}]}],"
    " \"recommendation\": {\"verdict\": \"any of these\", \"settings\": ["
    "{\"profile\": \"a\", \"exposed_us\": 100, \"comm_us\": 800, \"paste\": [\"x\"]},"
    "{\"profile\": \"b\", \"exposed_us\": 120, \"comm_us\": 810, \"paste\": [\"y\"]}]}}";

static void tune_beside_curve(void **state)
{
    (void)state;
    dl_record_t r;
    assert_int_equal(dl_an_parse(curve_run, sizeof(curve_run) - 1, "c.json", &r), DL_OK);
    cJSON *rec = cJSON_Parse(tune_rec);
    assert_non_null(rec);
    dl_tune_rep_t t;
    assert_int_equal(dl_an_tune_make(rec, &r, &t), DL_OK);
    assert_int_equal(t.nprofs, 2);
    assert_int_equal(t.ncand, 5);
    assert_int_equal(t.nx, 3); /* 1, 3, 25 MiB: one x for each, whatever the profile */
    assert_string_equal(t.xnames[2], "25 MiB");
    assert_int_equal(t.cand[4].prof, 1);
    assert_int_equal(t.cand[4].x, 1);
    assert_int_equal(t.cand[0].calls, 3);
    assert_true(isnan(t.cand[3].exposed_us));
    int rec_of[] = {0, 1, 0, 0, 1};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(t.cand[i].recommended, rec_of[i]);
    assert_int_equal(t.curve_bytes, 2097152);
    assert_string_equal(t.curve_prof, "p");
    assert_true(t.compared && t.agrees);
    assert_float_equal(t.best_bytes, 3 * 1048576.0, 0);
    assert_float_equal(t.best_exp, 100, 0);
    assert_float_equal(t.near_bytes, 3 * 1048576.0, 0); /* the lower of a's and b's 3 MiB */
    assert_float_equal(t.near_exp, 100, 0);
    assert_string_equal(t.line, "the curve says 2 MiB (profile p); tune measured among the best "
                                "3 MiB (exposed 0.1 ms per step); tune's nearest candidate to the "
                                "curve's size, 3 MiB, exposed 0.1 ms: the curve's advice agrees "
                                "with the measurement");
    dl_an_tune_free(&t);
    /* tune's first choice is its first setting (among equals, the least
     * communication), not the least exposed one. */
    cJSON *set0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "recommendation"),
                                                   "settings");
    cJSON_AddItemToArray(set0, cJSON_DetachItemFromArray(set0, 0));
    assert_int_equal(dl_an_tune_make(rec, &r, &t), DL_OK);
    assert_float_equal(t.best_exp, 120, 0);
    assert_float_equal(t.near_exp, 100, 0);
    assert_true(t.agrees);
    dl_an_tune_free(&t);
    cJSON_AddItemToArray(set0, cJSON_DetachItemFromArray(set0, 0));
    /* Only 25 MiB recommended: the curve's 2 MiB is not what the step prefers. */
    cJSON *set = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "recommendation"),
                                                  "settings");
    cJSON_DeleteItemFromArray(set, 1);
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetArrayItem(set, 0), "exposed_us",
                                           cJSON_CreateNumber(200));
    assert_int_equal(dl_an_tune_make(rec, &r, &t), DL_OK);
    assert_false(t.agrees);
    assert_float_equal(t.best_bytes, 25 * 1048576.0, 0);
    assert_float_equal(t.near_exp, 100, 0);
    dl_an_tune_free(&t);
    /* No sweep: nothing compared, the rest the same. */
    assert_int_equal(dl_an_tune_make(rec, NULL, &t), DL_OK);
    assert_false(t.compared);
    assert_int_equal(strncmp(t.line, "not compared: no sweep given", 28), 0);
    assert_int_equal(t.nx, 3);
    dl_an_tune_free(&t);
    cJSON_Delete(rec);
    dl_record_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(verdict_rule),
        cmocka_unit_test(spread_from_stdev),
        cmocka_unit_test(detects_by_content),
        cmocka_unit_test(pairs_one_profile_each),
        cmocka_unit_test(tune_beside_curve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
