/* tune's model of a step: the built-in models against their published
 * parameter counts, the model file both ways and its refusals, DDP's and
 * Horovod's bucketing and the timeline on hand-worked models. */
#include "unit_helpers.h"

#include "tune/tune.h"

/* A model written out: element counts, one dtype each. */
static void small_model(dl_model_t *m, const uint64_t *numel, const dl_dtype_t *dt, size_t n)
{
    memset(m, 0, sizeof(*m));
    m->t = calloc(n, sizeof(dl_tensor_t));
    m->n = m->cap = n;
    for (size_t i = 0; i < n; i++) {
        snprintf(m->t[i].name, sizeof(m->t[i].name), "t%zu", i);
        m->t[i].numel = numel[i];
        m->t[i].dtype = dt ? dt[i] : DL_DT_FLOAT32;
    }
}

static void assert_bucket(const dl_bucket_t *b, const size_t *want, size_t n)
{
    if (b->n != n) {
        print_error("bucket has %zu tensors, want %zu\n", b->n, n);
        fail();
    }
    for (size_t k = 0; k < n; k++)
        assert_int_equal(b->idx[k], want[k]);
}
#define BUCKET(b, ...)                                                                  \
    assert_bucket(b, (const size_t[]){__VA_ARGS__},                                    \
                  sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t))

/* The counts torchvision and transformers report for these modules. */
static void builtin_totals(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        uint64_t params;
        size_t tensors;
        const char *first, *last;
    } want[] = {
        {"resnet50", 25557032, 161, "conv1.weight", "fc.bias"},
        {"bert-large", 335141888, 391, "embeddings.word_embeddings.weight", "pooler.dense.bias"},
        {"gpt2", 124439808, 148, "wte.weight", "ln_f.bias"},
        {"llama2-7b", 6738415616ull, 291, "model.embed_tokens.weight", "lm_head.weight"},
    };
    assert_int_equal(dl_model_count, DL_ARRAY_SIZE(want));
    for (size_t i = 0; i < DL_ARRAY_SIZE(want); i++) {
        dl_model_t m;
        assert_int_equal(dl_model_builtin(want[i].name, DL_DT_BFLOAT16, &m), DL_OK);
        assert_int_equal(dl_model_params(&m), want[i].params);
        assert_int_equal(m.n, want[i].tensors);
        assert_string_equal(m.t[0].name, want[i].first);
        assert_string_equal(m.t[m.n - 1].name, want[i].last);
        assert_int_equal(m.t[0].dtype, DL_DT_BFLOAT16);
        dl_model_free(&m);
    }
    dl_model_t m;
    assert_int_equal(dl_model_builtin("resnet50", DL_DT_FLOAT32, &m), DL_OK);
    /* A block with a downsample, in registration order. */
    assert_string_equal(m.t[3].name, "layer1.0.conv1.weight");
    assert_string_equal(m.t[12].name, "layer1.0.downsample.0.weight");
    assert_int_equal(m.t[12].shape[0], 256);
    assert_int_equal(m.t[12].shape[1], 64);
    dl_model_free(&m);
}

static void file_round_trip(void **state)
{
    (void)state;
    dl_model_t m, back;
    assert_int_equal(dl_model_builtin("gpt2", DL_DT_FLOAT16, &m), DL_OK);
    m.t[5].ndim = 0; /* one given by its element count only */
    char *text = dl_model_to_json(&m);
    assert_non_null(text);
    assert_int_equal(dl_model_parse(text, "rt.json", DL_DT_FLOAT32, &back), DL_OK);
    assert_string_equal(back.name, "gpt2");
    assert_int_equal(back.n, m.n);
    for (size_t i = 0; i < m.n; i++) {
        assert_string_equal(back.t[i].name, m.t[i].name);
        assert_int_equal(back.t[i].numel, m.t[i].numel);
        assert_int_equal(back.t[i].ndim, m.t[i].ndim);
        assert_int_equal(back.t[i].dtype, DL_DT_FLOAT16);
        for (int d = 0; d < m.t[i].ndim; d++)
            assert_int_equal(back.t[i].shape[d], m.t[i].shape[d]);
    }
    free(text);
    dl_model_free(&back);
    dl_model_free(&m);
    /* No dtype: the one given. */
    assert_int_equal(dl_model_parse("{\"tensors\":[{\"name\":\"w\",\"shape\":[3,4]}]}", "f",
                                    DL_DT_BFLOAT16, &back), DL_OK);
    assert_int_equal(back.t[0].numel, 12);
    assert_int_equal(back.t[0].dtype, DL_DT_BFLOAT16);
    dl_model_free(&back);
}

static void file_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"not json", "not a JSON object"},
        {"[]", "not a JSON object"},
        {"{\"tensors\":[]}", "non-empty list"},
        {"{\"tensors\":[{\"name\":\"a\",\"shape\":[2]}],\"extra\":1}", "unknown key 'extra'"},
        {"{\"tensors\":[{\"name\":\"a\",\"shape\":[2],\"size\":3}]}", "unknown key 'size'"},
        {"{\"tensors\":[{\"name\":\"a\"}]}", "needs a \"shape\" or a \"numel\""},
        {"{\"tensors\":[{\"shape\":[2]}]}", "needs a \"name\""},
        {"{\"tensors\":[{\"name\":\"a\",\"shape\":[2,0]}]}", "whole number >= 1"},
        {"{\"tensors\":[{\"name\":\"a\",\"shape\":[2.5]}]}", "whole number >= 1"},
        {"{\"tensors\":[{\"name\":\"a\",\"numel\":-4}]}", "whole number >= 1"},
        {"{\"tensors\":[{\"name\":\"a\",\"shape\":[2,3],\"numel\":5}]}", "disagrees"},
        {"{\"tensors\":[{\"name\":\"a\",\"numel\":4,\"dtype\":\"int8\"}]}", "float32, float16"},
        {"{\"tensors\":[{\"name\":\"a\",\"numel\":4},{\"name\":\"a\",\"numel\":4}]}",
         "repeats an earlier"},
        {"{\"model\":3,\"tensors\":[{\"name\":\"a\",\"numel\":4}]}", "\"model\" must be"},
    };
    for (size_t i = 0; i < DL_ARRAY_SIZE(bad); i++) {
        dl_model_t m = {0};
        unit_capture_t c;
        unit_capture_begin(&c);
        dl_status_t st = dl_model_parse(bad[i].text, "bad.json", DL_DT_FLOAT32, &m);
        const char *err = unit_capture_end(&c);
        assert_int_equal(st, DL_ERR_INPUT);
        assert_int_equal(unit_lines(err), 1);
        assert_non_null(strstr(err, "bad.json"));
        if (!strstr(err, bad[i].says)) {
            print_error("case %zu said '%s', want '%s'\n", i, err, bad[i].says);
            fail();
        }
        assert_null(m.t);
    }
}

/* numel 100, 300, 50, 200, 10 (float32: 400, 1200, 200, 800, 40 bytes). */
static const uint64_t five[] = {100, 300, 50, 200, 10};

static void readiness(void **state)
{
    (void)state;
    dl_model_t m;
    small_model(&m, five, NULL, 5);
    double r[5];
    dl_ready_times(&m, 0.066, r); /* 660 elements in 66 ms: 0.1 ms each */
    assert_near(r[4], 0.001, 1e-12);
    assert_near(r[3], 0.021, 1e-12);
    assert_near(r[2], 0.026, 1e-12);
    assert_near(r[1], 0.056, 1e-12);
    assert_near(r[0], 0.066, 1e-12);
    dl_model_free(&m);
}

static void ddp_buckets(void **state)
{
    (void)state;
    dl_model_t m;
    small_model(&m, five, NULL, 5);
    double r[5] = {5, 4, 3, 2, 1};
    dl_buckets_t bs;
    /* Reverse order: 40 + 800 + 200 = 1040 >= 1000 closes the first
     * bucket; then the limit is 2000 and 1200 + 400 stays open. */
    const uint64_t lim[] = {1000, 2000};
    assert_int_equal(dl_bucket_ddp(&m, lim, 2, r, &bs), DL_OK);
    assert_int_equal(bs.n, 2);
    BUCKET(&bs.b[0], 4, 3, 2);
    BUCKET(&bs.b[1], 1, 0);
    assert_int_equal(bs.b[0].bytes, 1040);
    assert_near(bs.b[0].ready_s, 3, 0);
    assert_near(bs.b[1].ready_s, 5, 0);
    dl_buckets_free(&bs);
    /* The last limit repeats: 40+800+200 | 1200 | 400 at 1000 each. */
    assert_int_equal(dl_bucket_ddp(&m, lim, 1, r, &bs), DL_OK);
    assert_int_equal(bs.n, 3);
    BUCKET(&bs.b[0], 4, 3, 2);
    BUCKET(&bs.b[1], 1);
    BUCKET(&bs.b[2], 0);
    dl_buckets_free(&bs);
    /* Exactly at the limit closes it: 40 + 800 = 840. */
    const uint64_t at[] = {840};
    assert_int_equal(dl_bucket_ddp(&m, at, 1, r, &bs), DL_OK);
    BUCKET(&bs.b[0], 4, 3);
    dl_buckets_free(&bs);
    dl_model_free(&m);

    /* Per dtype: t3 is float16 (400 bytes) and has a bucket of its own;
     * each dtype walks the limits on its own. */
    const dl_dtype_t dts[] = {DL_DT_FLOAT32, DL_DT_FLOAT32, DL_DT_FLOAT32, DL_DT_FLOAT16,
                              DL_DT_FLOAT32};
    small_model(&m, five, dts, 5);
    assert_int_equal(dl_bucket_ddp(&m, lim, 2, r, &bs), DL_OK);
    assert_int_equal(bs.n, 3);
    BUCKET(&bs.b[0], 4, 2, 1); /* 40 + 200 + 1200 */
    BUCKET(&bs.b[1], 0);       /* float32's open one, float32 seen first */
    BUCKET(&bs.b[2], 3);
    assert_int_equal(bs.b[2].dtype, DL_DT_FLOAT16);
    dl_buckets_free(&bs);
    dl_model_free(&m);
}

static void horovod_fusion(void **state)
{
    (void)state;
    dl_model_t m;
    small_model(&m, five, NULL, 5);
    /* Ready (ms): t4 0.5, t3 0.8 | t2 1.2, t1 1.9, t0 2.0 (on the tick). */
    double r[5] = {2.0e-3, 1.9e-3, 1.2e-3, 0.8e-3, 0.5e-3};
    dl_buckets_t bs;
    assert_int_equal(dl_bucket_horovod(&m, 1000, 1e-3, r, &bs), DL_OK);
    assert_int_equal(bs.n, 4);
    BUCKET(&bs.b[0], 4, 3); /* 840 <= 1000 */
    assert_near(bs.b[0].ready_s, 1e-3, 1e-15);
    BUCKET(&bs.b[1], 2); /* 200 + 1200 > 1000, and skipping it overflows: stop */
    BUCKET(&bs.b[2], 1); /* the first is taken whatever its size */
    BUCKET(&bs.b[3], 0);
    for (int k = 1; k < 4; k++)
        assert_near(bs.b[k].ready_s, 2e-3, 1e-15);
    dl_buckets_free(&bs);
    /* A long cycle: one tick at 5 ms takes everything; 40+800 then 200 | ... */
    assert_int_equal(dl_bucket_horovod(&m, 1100, 5e-3, r, &bs), DL_OK);
    assert_int_equal(bs.n, 3);
    BUCKET(&bs.b[0], 4, 3, 2); /* 1040 */
    BUCKET(&bs.b[1], 1);
    BUCKET(&bs.b[2], 0);
    assert_near(bs.b[0].ready_s, 5e-3, 1e-15);
    dl_buckets_free(&bs);
    /* Threshold 0: every tensor alone. */
    assert_int_equal(dl_bucket_horovod(&m, 0, 1e-3, r, &bs), DL_OK);
    assert_int_equal(bs.n, 5);
    dl_buckets_free(&bs);
    dl_model_free(&m);

    /* Look-ahead past another dtype: a(f32 400) b(f16 200) c(f32 400), one
     * cycle, 1000: b is skipped (400 + 200 fits), c joins a, then b. */
    const uint64_t n3[] = {100, 100, 100};
    const dl_dtype_t d3[] = {DL_DT_FLOAT32, DL_DT_FLOAT16, DL_DT_FLOAT32};
    small_model(&m, n3, d3, 3);
    double r3[3] = {0.3e-3, 0.2e-3, 0.1e-3}; /* ready order: t2, t1, t0 */
    assert_int_equal(dl_bucket_horovod(&m, 1000, 1e-3, r3, &bs), DL_OK);
    assert_int_equal(bs.n, 2);
    BUCKET(&bs.b[0], 2, 0);
    BUCKET(&bs.b[1], 1);
    dl_buckets_free(&bs);
    /* The skipped bytes count: at 700, skipping b (400 + 200 = 600) is
     * allowed but c does not fit (800), and 400 + 200 + 400 > 700 stops. */
    assert_int_equal(dl_bucket_horovod(&m, 700, 1e-3, r3, &bs), DL_OK);
    assert_int_equal(bs.n, 3);
    BUCKET(&bs.b[0], 2);
    BUCKET(&bs.b[1], 1);
    BUCKET(&bs.b[2], 0);
    dl_buckets_free(&bs);
    dl_model_free(&m);
}

static void timeline(void **state)
{
    (void)state;
    dl_bucket_t b[4] = {{.ready_s = 1e-3}, {.ready_s = 2e-3}, {.ready_s = 2e-3},
                        {.ready_s = 2e-3}};
    dl_buckets_t bs = {b, 4};
    const double call[4] = {0.5e-3, 0.3e-3, 0.4e-3, 0.2e-3};
    dl_timeline_t t;
    dl_timeline(&bs, call, 2e-3, &t);
    assert_near(t.comm_s, 1.4e-3, 1e-15);
    assert_near(t.end_s, 2.9e-3, 1e-15); /* 1-1.5, 2-2.3, 2.3-2.7, 2.7-2.9 */
    assert_near(t.exposed_s, 0.9e-3, 1e-15);
    dl_timeline(&bs, call, 5e-3, &t); /* all hidden behind a longer backward */
    assert_near(t.exposed_s, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builtin_totals), cmocka_unit_test(file_round_trip),
        cmocka_unit_test(file_refusals),  cmocka_unit_test(readiness),
        cmocka_unit_test(ddp_buckets),    cmocka_unit_test(horovod_fusion),
        cmocka_unit_test(timeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
