/* The measurement loop's stop rule and batch planning, against a backend
 * whose calls take a chosen time with a chosen spread (a deterministic
 * generator): what users rely on is that a quiet size stops early, a noisy
 * one stops near what its spread needs, a budget is device time, and a
 * CUDA graph's replay of N calls is planned as N calls' worth of time. */
#include "unit_helpers.h"

#include "../../src/measure/measure.h"

typedef struct {
    double per_call; /* seconds */
    double cv;       /* relative spread of one call's time */
    int unit_calls;  /* calls per timed unit, as a graph replay */
    unsigned long long rng;
    int batches, biggest;
    long units;
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

static dl_status_t f_prepare(void *ctx, const dl_case_t *c) { (void)ctx; (void)c; return DL_OK; }
static dl_status_t f_check(void *ctx, const dl_case_t *c, uint64_t *wrong)
{
    (void)ctx; (void)c;
    *wrong = 0;
    return DL_OK;
}

/* Times per call, as the nccl backend gives them (a replay / N). */
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
            times[i] = t;
        *total += t;
    }
    if (times) {
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
static void f_traits(void *ctx, dl_backend_traits_t *t) { t->unit_calls = ((fake_t *)ctx)->unit_calls; }

static const dl_backend_ops_t fake_ops = {.name = "fake", .abi = DL_BACKEND_ABI, .caps = DL_CAP_MODELLED,
                                          .prepare = f_prepare, .run = f_run, .check = f_check,
                                          .traits = f_traits};

static dl_result_t measure_with(fake_t *f, const dl_measure_opts_t *o)
{
    dl_xcomm_t x = {.max_doubles = one_max, .sum_u64 = one_sum, .gather_double = one_gather,
                    .rank = 0, .nranks = 1};
    dl_case_t c;
    dl_result_t r;
    dl_case_init(&c, dl_colls[DL_COLL_ALLREDUCE], DL_DT_FLOAT32, DL_OP_SUM, DL_PLACE_OUT, 0, 1024,
                 1, 0);
    assert_int_equal(dl_measure_case(&fake_ops, f, &x, o, &c, &r), DL_OK);
    return r;
}

/* The defaults' shape: adaptive to a 1% interval within the budget. */
static dl_result_t measure(fake_t *f, double budget_s)
{
    dl_measure_opts_t o = {.warmup = 5, .ci_target = 0.01, .budget_s = budget_s, .min_iters = 5,
                           .max_iters = 1000000, .check = 1};
    return measure_with(f, &o);
}

/* A quiet size (0.5% spread) has its answer after the first, short batch. */
static void quiet_stops_after_first_batch(void **state)
{
    (void)state;
    fake_t f = {.per_call = 10e-6, .cv = 0.005, .rng = 1};
    dl_result_t r = measure(&f, 0.1);
    assert_true(r.converged);
    assert_int_equal(f.batches, 1);
    assert_true(r.t.n <= 110); /* about 1 ms of 10 us calls */
    dl_result_free(&r);
}

/* A noisy size (30% spread) needs about (1.96 x 0.3 / 0.01)^2 = 3458 calls:
 * it stops near that, not a whole 5 ms batch later, and in a few batches. */
static void noisy_stops_near_its_need(void **state)
{
    (void)state;
    fake_t f = {.per_call = 5e-6, .cv = 0.3, .rng = 7};
    dl_result_t r = measure(&f, 1.0);
    assert_true(r.converged);
    assert_true(r.t.n >= 3000 && r.t.n <= 4700);
    assert_true(f.batches <= 8);
    assert_true(f.biggest <= 1100); /* no batch much over 5 ms (the mean is an estimate) */
    assert_true(r.t.ci95 <= 0.01 * r.t.mean);
    dl_result_free(&r);
}

/* Graph replays of 100 calls of 1 us: a batch is planned in device time
 * (the first about 1 ms: 10 replays), and the budget is device time too. */
static void graph_units_planned_in_device_time(void **state)
{
    (void)state;
    fake_t f = {.per_call = 1e-6, .cv = 0.005, .unit_calls = 100, .rng = 3};
    dl_result_t r = measure(&f, 0.1);
    assert_true(r.converged);
    assert_true(f.biggest <= 11);
    assert_true(r.t.n <= 11);
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

/* A fixed count is exactly that count, whatever the spread. */
static void fixed_count_is_exact(void **state)
{
    (void)state;
    fake_t f = {.per_call = 1e-6, .cv = 0.5, .rng = 9};
    dl_measure_opts_t o = {.warmup = 1, .iters = 12345, .min_iters = 1, .max_iters = 1000000,
                           .check = 1};
    dl_result_t r = measure_with(&f, &o);
    assert_int_equal(r.t.n, 12345);
    assert_int_equal(f.units, 12345);
    dl_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quiet_stops_after_first_batch),
        cmocka_unit_test(noisy_stops_near_its_need),
        cmocka_unit_test(graph_units_planned_in_device_time),
        cmocka_unit_test(fixed_count_is_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
