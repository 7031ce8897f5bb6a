/* The measurement loop's stop rule and batch planning, against a backend
 * whose calls take a chosen time with a chosen spread (a deterministic
 * generator): what users rely on is that a quiet size stops early, a noisy
 * one stops near what its spread needs, a budget is device time, and a
 * CUDA graph's replay of N calls is planned as N calls' worth of time. */
#include <string.h>
#include "unit_helpers.h"

#include <math.h>

#include "../../src/measure/measure.h"

typedef struct {
    double per_call; /* seconds */
    double cv;       /* relative spread of one call's time */
    int unit_calls;  /* calls per timed unit, as a graph replay */
    int bus_ranks;   /* the ranks the call spans (0: the communicator's) */
    double overhead; /* seconds a call costs more when timed one by one (an event) */
    double batch_cv; /* relative spread of a whole batch (host jitter hits a batch) */
    unsigned long long rng;
    int batches, biggest;
    long units;
    int prepares, checks; /* a check refills, as the backends' do */
} fake_t;

static double gauss(fake_t *f)
{
    /* Sum of 12 uniforms minus 6: mean 0, variance 1, no libm state. */
    double s = 0;
    for (int i = 0; i < 12; i++) {
        f->rng = f->rng * 6364136223846793005ull + 1442695040888963407ull;
        s += (double)(f->rng >> 11) / 9007199254740992.0;
    }
    return s - 6;
}

static dl_status_t f_prepare(void *ctx, const dl_case_t *c)
{
    (void)c;
    ((fake_t *)ctx)->prepares++;
    return DL_OK;
}
static dl_status_t f_check(void *ctx, const dl_case_t *c, uint64_t *wrong)
{
    (void)c;
    ((fake_t *)ctx)->checks++;
    *wrong = 0;
    return DL_OK;
}

/* Times per call, as the nccl backend gives them (a replay / N); a call
 * timed on its own costs overhead more, as an event between calls does. */
static dl_status_t f_run(void *ctx, const dl_case_t *c, int iters, double *times, double *total)
{
    (void)c;
    fake_t *f = ctx;
    *total = 0;
    for (int i = 0; i < iters; i++) {
        double t = f->per_call * (1 + f->cv * gauss(f));
        if (t < f->per_call * 0.05)
            t = f->per_call * 0.05;
        if (times)
            t += f->overhead; /* the harness cost of timing each call */
        if (times)
            times[i] = t;
        *total += t;
    }
    if (!times) { /* batches timed whole: the warm-up and the timed loop's */
        double j = f->batch_cv > 0 ? 1 + f->batch_cv * gauss(f) : 1;
        *total *= j > 0.5 ? j : 0.5;
        f->batches++;
        f->units += iters;
        if (iters > f->biggest)
            f->biggest = iters;
    }
    return DL_OK;
}

static dl_status_t one_max(void *a, double *v, size_t n) { (void)a; (void)v; (void)n; return DL_OK; }
static dl_status_t one_sum(void *a, uint64_t *v, size_t n) { (void)a; (void)v; (void)n; return DL_OK; }
static dl_status_t one_gather(void *a, double v, double *out) { (void)a; out[0] = v; return DL_OK; }

/* Its calls per timed unit, as a graph replay: a trait, as nccl's -G is. */
static void f_traits(void *ctx, dl_backend_traits_t *t)
{
    t->unit_calls = ((fake_t *)ctx)->unit_calls;
    t->bus_ranks = ((fake_t *)ctx)->bus_ranks;
}

static const dl_backend_ops_t fake_ops = {.name = "fake", .caps = DL_CAP_MODELLED,
                                          .prepare = f_prepare, .run = f_run, .check = f_check,
                                          .traits = f_traits};

static dl_result_t measure_at(fake_t *f, const dl_measure_opts_t *o, dl_place_t place)
{
    dl_xcomm_t x = {.max_doubles = one_max, .sum_u64 = one_sum, .gather_double = one_gather,
                    .rank = 0, .nranks = 1};
    dl_case_t c;
    dl_result_t r;
    dl_case_init(&c, dl_colls[DL_COLL_ALLREDUCE], DL_DT_FLOAT32, DL_OP_SUM, place, 0, 1024, 1, 0);
    assert_int_equal(dl_measure_case(&fake_ops, f, &x, o, &c, &r), DL_OK);
    return r;
}

static dl_result_t measure_with(fake_t *f, const dl_measure_opts_t *o)
{
    return measure_at(f, o, DL_PLACE_OUT);
}

/* The defaults' shape: adaptive to a 1% interval within the budget. */
static dl_result_t measure(fake_t *f, double budget_s)
{
    dl_measure_opts_t o = {.warmup = 5, .ci_target = 0.01, .budget_s = budget_s, .min_iters = 5,
                           .max_iters = 1000000, .check = 1};
    return measure_with(f, &o);
}

/* A quiet size (0.5% spread) has its answer after the first few short
 * batches (the CI is of batch means: MIN_BATCHES of them at least). */
static void quiet_stops_after_first_batch(void **state)
{
    (void)state;
    fake_t f = {.per_call = 10e-6, .cv = 0.005, .rng = 1};
    dl_result_t r = measure(&f, 0.1);
    assert_true(r.converged);
    assert_int_equal(f.batches, 1 + 3); /* the warm-up, then three batches */
    assert_true(r.t.n <= 160);          /* three times about 0.5 ms of 10 us calls */
    dl_result_free(&r);
}

/* One rank in place moves nothing (the library returns at once): its first
 * three batches measure the call's own cost, and the row stops there
 * (no-op), however far its interval is from the target; the same call
 * spanning two ranks still runs to its target. */
static void one_rank_in_place_stops_as_no_op(void **state)
{
    (void)state;
    fake_t f = {.per_call = 0.2e-6, .cv = 0.5, .batch_cv = 0.2, .rng = 3};
    dl_measure_opts_t o = {.warmup = 5, .ci_target = 0.02, .budget_s = 0.1, .min_iters = 5,
                           .max_iters = 100000, .check = 1};
    dl_result_t r = measure_at(&f, &o, DL_PLACE_IN);
    assert_int_equal(r.stop, DL_STOP_NO_OP);
    assert_true(r.converged);
    assert_int_equal(f.batches, 1 + 3); /* the warm-up, then three batches */
    assert_true(r.t.ci95 > 0.02 * r.t.mean); /* stopped short of the target, by design */
    assert_true(r.algbw_gbps == 0 && r.busbw_gbps == 0);
    dl_result_free(&r);

    fake_t g = {.per_call = 0.2e-6, .cv = 0.5, .batch_cv = 0.2, .rng = 3, .bus_ranks = 2};
    r = measure_at(&g, &o, DL_PLACE_IN);
    assert_int_not_equal(r.stop, DL_STOP_NO_OP);
    assert_true(g.batches > 1 + 3);
    dl_result_free(&r);

    fake_t h = {.per_call = 0.2e-6, .cv = 0.5, .batch_cv = 0.2, .rng = 3};
    o.iters = 50; /* a fixed count is kept */
    r = measure_at(&h, &o, DL_PLACE_IN);
    assert_int_equal(r.stop, DL_STOP_FIXED);
    assert_int_equal((int)r.t.n, 50);
    dl_result_free(&r);
}

/* A noisy size (30% spread) needs about (1.96 x 0.3 / 0.01)^2 = 3458 calls:
 * it stops near that (a CI of a few batch means has a wider t factor, so
 * up to about twice), not many 5 ms batches later. */
static void noisy_stops_near_its_need(void **state)
{
    (void)state;
    fake_t f = {.per_call = 5e-6, .cv = 0.3, .rng = 7};
    dl_result_t r = measure(&f, 1.0);
    assert_true(r.converged);
    assert_true(r.t.n >= 3000 && r.t.n <= 7000);
    assert_true(f.batches <= 1 + 12);
    assert_true(f.biggest <= 1100); /* no batch much over 5 ms (the mean is an estimate) */
    assert_true(r.t.ci95 <= 0.01 * r.t.mean);
    dl_result_free(&r);
}

/* Graph replays of 100 calls of 1 us: a batch is planned in device time
 * (the first ones about 0.5 ms: 5 replays), and the budget is device time too. */
static void graph_units_planned_in_device_time(void **state)
{
    (void)state;
    fake_t f = {.per_call = 1e-6, .cv = 0.005, .unit_calls = 100, .rng = 3};
    dl_result_t r = measure(&f, 0.1);
    assert_true(r.converged);
    assert_true(f.biggest <= 6);
    assert_true(r.t.n <= 16);
    dl_result_free(&r);

    fake_t g = {.per_call = 1e-6, .cv = 2, .unit_calls = 100, .rng = 5}; /* never converges */
    r = measure(&g, 0.02);
    assert_false(r.converged);
    /* Device time spent: at least the budget, past it by no more than a batch
     * (5 ms, planned on a noisy estimate); unscaled, it was 100 times over. */
    double device = r.t.mean * (double)r.t.n * 100;
    assert_true(device >= 0.02 && device <= 0.02 + 0.008);
    dl_result_free(&r);
}

/* A case is filled once before it is timed: the check alone when checking
 * (a backend's check refills the buffers itself), the fill alone when not.
 * Both was a second fill of every checked row: 8 GiB of device writes at 4 GiB. */
static void case_filled_once(void **state)
{
    (void)state;
    for (int check = 0; check <= 1; check++) {
        fake_t f = {.per_call = 10e-6, .cv = 0.005, .rng = 11};
        dl_measure_opts_t o = {.warmup = 1, .iters = 20, .min_iters = 1, .max_iters = 100,
                               .check = check};
        dl_result_t r = measure_with(&f, &o);
        assert_int_equal(f.checks, check);
        assert_int_equal(f.prepares, 1 - check);
        dl_result_free(&r);
    }
}

/* A fixed count is exactly that count, whatever the spread. */
static void fixed_count_is_exact(void **state)
{
    (void)state;
    fake_t f = {.per_call = 1e-6, .cv = 0.5, .rng = 9};
    dl_measure_opts_t o = {.warmup = 1, .iters = 12345, .min_iters = 1, .max_iters = 1000000,
                           .check = 1};
    dl_result_t r = measure_with(&f, &o);
    assert_int_equal(r.t.n, 12345);
    assert_int_equal(f.units, 12345 + 1); /* and the one warm-up call */
    dl_result_free(&r);
}

/* The estimators against a known harness cost: calls of 5 us that cost
 * 1 us more when timed one by one. The mean (batches timed whole) is the
 * calls' own 5 us, unbiased; the per-call spread (p50) is the sampled
 * pass's and carries the cost, which is why it is not the headline. */
static void mean_carries_no_timing_cost(void **state)
{
    (void)state;
    fake_t f = {.per_call = 5e-6, .cv = 0.01, .overhead = 1e-6, .rng = 11};
    dl_result_t r = measure(&f, 0.1);
    assert_true(r.converged);
    assert_true(fabs(r.t.mean - 5e-6) < 0.005 * 5e-6);
    assert_true(fabs(r.avg_s - 5e-6) < 0.005 * 5e-6);
    assert_true(fabs(r.t.p50 - 6e-6) < 0.02 * 6e-6);
    assert_true(r.t.n >= 100); /* the timed batches' calls, not the samples' */
    dl_result_free(&r);

    /* A fixed count: the same. */
    fake_t g = {.per_call = 5e-6, .cv = 0.01, .overhead = 1e-6, .rng = 13};
    dl_measure_opts_t o = {.warmup = 1, .iters = 2000, .min_iters = 1, .max_iters = 1000000};
    r = measure_with(&g, &o);
    assert_true(fabs(r.t.mean - 5e-6) < 0.005 * 5e-6);
    assert_true(r.t.p50 > 5.8e-6);
    dl_result_free(&r);
}

/* Stragglers by the MAD rule over the ranks' lateness: a rank 80 us late
 * among ranks a microsecond or two late is named; a tight group, or two
 * ranks (which one is off?), names none; lateness under a quarter of the
 * row's p50 is not a straggler however tight the others. */
static void straggler_rule(void **state)
{
    (void)state;
    double late[4] = {1e-6, 2e-6, 1.5e-6, 80e-6};
    int flag[4];
    dl_result_t r = {.nranks = 4, .rank_late_s = late};
    r.t.p50 = 10e-6;
    assert_int_equal(dl_result_stragglers(&r, flag), 1);
    assert_int_equal(flag[3], 1);
    assert_int_equal(flag[0] + flag[1] + flag[2], 0);
    r.t.p50 = 400e-6; /* 80 us late on 400 us calls: under a quarter of a call */
    assert_int_equal(dl_result_stragglers(&r, flag), 0);
    double tight[4] = {1e-6, 1.2e-6, 0.9e-6, 1.1e-6};
    r.rank_late_s = tight;
    r.t.p50 = 1e-6;
    assert_int_equal(dl_result_stragglers(&r, flag), 0);
    r.rank_late_s = late;
    r.nranks = 2;
    assert_int_equal(dl_result_stragglers(&r, flag), 0);
}

/* Slow ranks by their own time among their host's ranks: a rank at 4x the
 * others of its host is named; a host of two ranks judges nothing, and a
 * fast host beside a slow one makes no rank of either slow. */
static void slow_rank_rule(void **state)
{
    (void)state;
    double mean[8] = {20e-6, 21e-6, 80e-6, 20e-6, 200e-6, 201e-6, 199e-6, 200e-6};
    int host[8] = {0, 0, 0, 0, 1, 1, 1, 1}, flag[8];
    double ratio[8];
    dl_result_t r = {.nranks = 8, .rank_mean_s = mean};
    assert_int_equal(dl_result_slow_ranks(&r, host, flag, ratio), 1);
    assert_int_equal(flag[2], 1);
    assert_true(ratio[2] > 3.5 && ratio[2] < 4.5);
    int pairs[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    assert_int_equal(dl_result_slow_ranks(&r, pairs, flag, NULL), 0);
    mean[2] = 21e-6;
    assert_int_equal(dl_result_slow_ranks(&r, host, flag, NULL), 0);
}

/* The tally names a rank late or slow in at least half the rows, with why. */
static void tally_names_half_the_rows(void **state)
{
    (void)state;
    double late[4] = {1e-6, 2e-6, 1.5e-6, 80e-6}, on_time[4] = {1e-6, 2e-6, 1.5e-6, 1.2e-6};
    double mean[4] = {20e-6, 20e-6, 20e-6, 20e-6};
    dl_result_t r = {.nranks = 4, .rank_late_s = late, .rank_mean_s = mean};
    r.t.p50 = 10e-6;
    dl_rank_tally_t t;
    dl_rank_why_t w;
    assert_int_equal(dl_rank_tally_init(&t, 4, NULL, NULL), DL_OK);
    dl_rank_tally_add(&t, &r);
    r.rank_late_s = on_time;
    dl_rank_tally_add(&t, &r);
    dl_rank_tally_add(&t, &r);
    assert_int_equal(dl_rank_tally_named(&t, 3, &w), 0); /* once in three rows: a busy host */
    r.rank_late_s = late;
    dl_rank_tally_add(&t, &r);
    assert_int_equal(dl_rank_tally_named(&t, 3, &w), 1); /* two of four */
    assert_int_equal(w.late_rows, 2);
    assert_int_equal(w.rows, 4);
    assert_int_equal(dl_rank_tally_named(&t, 0, &w), 0);
    char text[128];
    dl_rank_why_text(&w, "rows", text, sizeof(text));
    assert_string_equal(text, "");
    dl_rank_tally_named(&t, 3, &w);
    dl_rank_why_text(&w, "rows", text, sizeof(text));
    assert_non_null(strstr(text, "late in 2/4 rows by 78"));
    dl_rank_tally_free(&t);
}

/* NCCL_ALGO's reach: Tree is all-reduce's alone, Ring everyone's; forms
 * not read (per-function, unknown names, unset) leave nothing out. */
static void nccl_algo_leaves_out(void **state)
{
    (void)state;
    const unsigned ag = 1u << DL_COLL_ALLGATHER, bc = 1u << DL_COLL_BROADCAST,
                   rs = 1u << DL_COLL_REDUCESCATTER, rd = 1u << DL_COLL_REDUCE,
                   ar = 1u << DL_COLL_ALLREDUCE;
    char why[96];
    assert_int_equal(dl_nccl_algo_colls_off("Tree", why, sizeof(why)), ag | bc | rs | rd);
    assert_string_equal(why, "NCCL_ALGO=Tree leaves NCCL no algorithm for it");
    assert_int_equal(dl_nccl_algo_colls_off("tree", NULL, 0), ag | bc | rs | rd);
    assert_int_equal(dl_nccl_algo_colls_off("Ring", why, sizeof(why)), 0);
    assert_string_equal(why, "");
    assert_int_equal(dl_nccl_algo_colls_off("Tree,Ring", NULL, 0), 0);
    assert_int_equal(dl_nccl_algo_colls_off("^Ring", NULL, 0), bc | rd);
    assert_int_equal(dl_nccl_algo_colls_off("PAT", NULL, 0), ar | bc | rd);
    assert_int_equal(dl_nccl_algo_colls_off("NVLS,NVLSTree", NULL, 0), bc | rd);
    assert_int_equal(dl_nccl_algo_colls_off("allreduce:tree", NULL, 0), 0);
    assert_int_equal(dl_nccl_algo_colls_off("Tree,Spiral", NULL, 0), 0);
    assert_int_equal(dl_nccl_algo_colls_off("", NULL, 0), 0);
    assert_int_equal(dl_nccl_algo_colls_off(NULL, NULL, 0), 0);
    char algos[64];
    dl_nccl_algos_of(DL_COLL_BROADCAST, algos, sizeof(algos));
    assert_string_equal(algos, "Ring");
    dl_nccl_algos_of(DL_COLL_ALLTOALL, algos, sizeof(algos));
    assert_string_equal(algos, "");
}

/* A call that does no GPU work (one rank in place: 0.15 us) whose batches
 * differ by 3% (host jitter) stops once its interval is under 0.01 us, the
 * table's last digit, before it reaches 2% of 0.15 us (3 ns). A 3 us call
 * with the same jitter is still held to 2%. */
static void sub_microsecond_call_stops_at_the_shown_digit(void **state)
{
    (void)state;
    dl_measure_opts_t o = {.warmup = 5, .ci_target = 0.02, .budget_s = 1, .min_iters = 5,
                           .max_iters = 1000000, .check = 1};
    fake_t f = {.per_call = 0.15e-6, .cv = 0.1, .batch_cv = 0.03, .rng = 11};
    dl_result_t r = measure_with(&f, &o);
    assert_int_equal(r.stop, DL_STOP_CI);
    assert_true(r.t.ci95 <= 1e-8 && r.t.ci95 > 0.02 * r.t.mean); /* the floor, not 2% */
    assert_true(r.t.ci95 > 5e-9); /* not half a digit: 4x the calls for nothing shown */
    fake_t g = {.per_call = 3e-6, .cv = 0.1, .batch_cv = 0.03, .rng = 11};
    dl_result_t q = measure_with(&g, &o);
    assert_int_equal(q.stop, DL_STOP_CI);
    assert_true(q.t.ci95 <= 0.02 * q.t.mean);
    dl_result_free(&r);
    dl_result_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quiet_stops_after_first_batch),
        cmocka_unit_test(noisy_stops_near_its_need),
        cmocka_unit_test(one_rank_in_place_stops_as_no_op),
        cmocka_unit_test(graph_units_planned_in_device_time),
        cmocka_unit_test(case_filled_once),
        cmocka_unit_test(fixed_count_is_exact),
        cmocka_unit_test(mean_carries_no_timing_cost),
        cmocka_unit_test(straggler_rule),
        cmocka_unit_test(slow_rank_rule),
        cmocka_unit_test(tally_names_half_the_rows),
        cmocka_unit_test(nccl_algo_leaves_out),
        cmocka_unit_test(sub_microsecond_call_stops_at_the_shown_digit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
