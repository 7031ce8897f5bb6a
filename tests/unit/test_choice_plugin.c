/* dlcomm's NCCL profiler plugin (src/backends/nccl/profiler/choice_plugin.c)
 * driven as NCCL drives it: loaded by dlopen, its ncclProfiler_v5 table
 * found by name, events handed over in NCCL's v5 descriptor layout. The
 * descriptors are built here from the interface's byte offsets (x86-64),
 * not from the plugin's own declaration, so a plugin that read the wrong
 * field would fail. The choices replayed are those NCCL 2.28.3 made on the
 * H200, read from a run it recorded (results/reference/h200-multirank/). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

/* NCCL's v5 event descriptor: offsets of the fields the plugin reads. */
enum { OFF_TYPE = 0, OFF_RANK = 16, OFF_COLL_FUNC = 32, OFF_COLL_NCH = 80, OFF_COLL_ALGO = 88,
       OFF_COLL_PROTO = 96, OFF_P2P_NCH = 60, DESCR_SIZE = 128 };
enum { EV_GROUP = 1 << 0, EV_COLL = 1 << 1, EV_P2P = 1 << 2 };

typedef struct {
    const char *name;
    int (*init)(void **, uint64_t, int *, const char *, int, int, int, void *);
    int (*start)(void *, void **, void *);
    int (*stop)(void *);
    int (*state)(void *, int, void *);
    int (*finalize)(void *);
} table_t;

static struct {
    void *lib;
    table_t *t;
    int (*arm)(int);
    int (*take)(char *, size_t, char *, size_t, int *);
    int mask; /* NCCL's activation mask, which the plugin sets */
    void *ctx;
} P;

static void put(unsigned char *d, size_t off, const void *v, size_t n) { memcpy(d + off, v, n); }

static void event(uint64_t type, const char *algo, const char *proto, uint8_t nch)
{
    unsigned char d[DESCR_SIZE] = {0};
    const char *func = "AllReduce";
    int rank = 0;
    put(d, OFF_TYPE, &type, sizeof(type));
    put(d, OFF_RANK, &rank, sizeof(rank));
    if (type == EV_COLL) {
        put(d, OFF_COLL_FUNC, &func, sizeof(func));
        put(d, OFF_COLL_NCH, &nch, 1);
        put(d, OFF_COLL_ALGO, &algo, sizeof(algo));
        put(d, OFF_COLL_PROTO, &proto, sizeof(proto));
    } else if (type == EV_P2P) {
        put(d, OFF_P2P_NCH, &nch, 1);
    }
    void *handle = (void *)1;
    assert_int_equal(P.t->start(P.ctx, &handle, d), 0);
    assert_null(handle); /* nothing for NCCL to stop */
}

static int load(void **state)
{
    (void)state;
    P.lib = dlopen(DL_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!P.lib)
        return -1;
    P.t = dlsym(P.lib, "ncclProfiler_v5");
    P.arm = (int (*)(int))dlsym(P.lib, "dlcomm_choice_arm");
    P.take = (int (*)(char *, size_t, char *, size_t, int *))dlsym(P.lib, "dlcomm_choice_take");
    return P.t && P.arm && P.take ? 0 : -1;
}

static void before_init_nothing_armed(void **state)
{
    (void)state;
    assert_int_equal(P.arm(1), 0); /* no communicator yet: nothing to arm */
    assert_int_equal(P.t->init(&P.ctx, 1, &P.mask, "c", 4, 4, 0, NULL), 0);
    assert_non_null(P.ctx);
    assert_int_equal(P.mask, 0); /* unarmed: NCCL asks nothing during timed calls */
}

static void armed_window_takes_the_call(void **state)
{
    (void)state;
    char algo[16], proto[16];
    int nch = -1;
    /* 4 ranks, 8 B: TREE/LL; then 1 MiB: RING/SIMPLE on 2 channels */
    assert_int_equal(P.arm(1), 1);
    assert_int_equal(P.mask, EV_COLL | EV_P2P);
    event(EV_GROUP, NULL, NULL, 0);
    event(EV_COLL, "TREE", "LL", 1);
    assert_int_equal(P.arm(0), 1);
    assert_int_equal(P.mask, 0);
    assert_int_equal(P.take(algo, sizeof(algo), proto, sizeof(proto), &nch), 1);
    assert_string_equal(algo, "TREE");
    assert_string_equal(proto, "LL");
    assert_int_equal(nch, 1);
    P.arm(1);
    event(EV_COLL, "RING", "SIMPLE", 2);
    P.arm(0);
    assert_int_equal(P.take(algo, sizeof(algo), proto, sizeof(proto), &nch), 1);
    assert_string_equal(algo, "RING");
    assert_string_equal(proto, "SIMPLE");
    assert_int_equal(nch, 2);
}

static void point_to_point_has_no_algorithm(void **state)
{
    (void)state;
    char algo[16], proto[16];
    int nch;
    P.arm(1);
    event(EV_P2P, NULL, NULL, 2); /* alltoall: one send and one receive per peer */
    event(EV_P2P, NULL, NULL, 4);
    P.arm(0);
    assert_int_equal(P.take(algo, sizeof(algo), proto, sizeof(proto), &nch), 2);
    assert_string_equal(algo, "P2P");
    assert_string_equal(proto, "");
    assert_int_equal(nch, 4);
}

static void arming_forgets(void **state)
{
    (void)state;
    char algo[16] = "x", proto[16] = "x";
    int nch = 9;
    P.arm(1);
    P.arm(0); /* a window in which NCCL launched nothing (a backend that failed first) */
    assert_int_equal(P.take(algo, sizeof(algo), proto, sizeof(proto), &nch), 0);
    assert_string_equal(algo, "");
    assert_int_equal(nch, 0);
    assert_int_equal(P.t->finalize(P.ctx), 0);
}

/* Every row of a recorded H200 run (4 ranks sharing the GPU), its choice
 * handed to the plugin as NCCL's event and taken back as the row says. */
static void replays_the_recorded_run(void **state)
{
    (void)state;
    FILE *f = fopen(DL_RECORDED_RUN, "r");
    assert_non_null(f);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *run = cJSON_Parse(text), *p, *r;
    assert_non_null(run);
    int rows = 0;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(run, "profiles"))
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(p, "results"))
    {
        const char *algo = cJSON_GetStringValue(cJSON_GetObjectItem(r, "algo"));
        const char *proto = cJSON_GetStringValue(cJSON_GetObjectItem(r, "proto"));
        int nch = cJSON_GetObjectItem(r, "nchannels")->valueint;
        char a[16], q[16];
        int got;
        P.arm(1);
        if (strcmp(algo, "P2P") == 0)
            event(EV_P2P, NULL, NULL, (uint8_t)nch);
        else
            event(EV_COLL, algo, proto, (uint8_t)nch);
        P.arm(0);
        assert_int_equal(P.take(a, sizeof(a), q, sizeof(q), &got), 1);
        assert_string_equal(a, algo);
        assert_string_equal(q, proto ? proto : "");
        assert_int_equal(got, nch);
        rows++;
    }
    assert_int_equal(rows, 32); /* 2 profiles x 2 collectives x 4 sizes x 2 placements */
    cJSON_Delete(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(before_init_nothing_armed),
        cmocka_unit_test(armed_window_takes_the_call),
        cmocka_unit_test(point_to_point_has_no_algorithm),
        cmocka_unit_test(replays_the_recorded_run),
        cmocka_unit_test(arming_forgets),
    };
    return cmocka_run_group_tests(tests, load, NULL);
}
