/* engine: the protocol's framing and the profile loader, without processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "engine/spawn.h"
#include "sys/sys.h"

static void frames_round_trip(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    double v[3] = {1.5, -2, 1e9};
    assert_int_equal(dl_msg_send2(sv[0], DL_MSG_XC_MAX, v, 16, v + 2, 8), DL_OK);
    assert_int_equal(dl_msg_send(sv[0], DL_MSG_DONE, NULL, 0), DL_OK);
    dl_msg_t m;
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_OK);
    assert_int_equal(m.type, DL_MSG_XC_MAX);
    assert_int_equal(m.len, 24);
    assert_memory_equal(m.data, v, 24);
    dl_msg_free(&m);
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_OK);
    assert_int_equal(m.type, DL_MSG_DONE);
    assert_int_equal(m.len, 0);
    dl_msg_free(&m);
    close(sv[0]); /* the peer is gone: EOF reads as a crash */
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_ERR_CRASH);
    close(sv[1]);
}

static void bad_frames_refused(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    dl_wire_hdr_t h = {0x12345678u, DL_WIRE_VERSION, DL_MSG_DONE, 0};
    assert_int_equal(write(sv[0], &h, sizeof(h)), (ssize_t)sizeof(h));
    dl_msg_t m;
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_ERR_COMM);
    h = (dl_wire_hdr_t){DL_WIRE_MAGIC, DL_WIRE_VERSION + 1, DL_MSG_DONE, 0};
    assert_int_equal(write(sv[0], &h, sizeof(h)), (ssize_t)sizeof(h));
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_ERR_COMM);
    h = (dl_wire_hdr_t){DL_WIRE_MAGIC, DL_WIRE_VERSION, DL_MSG_DONE, DL_WIRE_MAX_LEN + 1};
    assert_int_equal(write(sv[0], &h, sizeof(h)), (ssize_t)sizeof(h));
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_ERR_COMM);
    close(sv[0]);
    close(sv[1]);
}

static dl_status_t load_text(const char *text, dl_profile_t *p)
{
    char path[] = "/tmp/dlcomm-profile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    dl_log_set_mute(1);
    dl_status_t st = dl_profile_load_file(path, p);
    dl_log_set_mute(0);
    unlink(path);
    return st;
}

static void profile_loads(void **state)
{
    (void)state;
    dl_profile_t p;
    assert_int_equal(load_text("{\"name\": \"x\", \"description\": \"d\", \"env\": "
                               "{\"NCCL_ALGO\": \"Ring\", \"NCCL_NVLS_ENABLE\": \"0\"}, "
                               "\"intent\": {\"algo\": \"Ring\"}, "
                               "\"applies_when\": {\"min_nodes\": 2}}", &p), DL_OK);
    assert_string_equal(p.name, "x");
    assert_int_equal(p.nenv, 2);
    assert_string_equal(p.env[0], "NCCL_ALGO=Ring");
    assert_int_equal(p.min_nodes, 2);
    char why[128];
    assert_non_null(dl_profile_skip_reason(&p, 1, why, sizeof(why)));
    assert_null(dl_profile_skip_reason(&p, 2, why, sizeof(why)));
    for (int i = 0; i < p.nenv; i++)
        free(p.env[i]);
    free(p.env);
    cJSON_Delete(p.intent);
}

static void profile_refusals(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"name\": \"x\", \"env\": {",                                  /* not JSON */
        "[1, 2]",                                                        /* not an object */
        "{\"env\": {}}",                                                 /* no name */
        "{\"name\": \"x\"}",                                             /* no env */
        "{\"name\": \"a/b\", \"env\": {}}",                              /* bad name */
        "{\"name\": \"x\", \"env\": {\"A\": 1}}",                        /* env not a string */
        "{\"name\": \"x\", \"env\": {}, \"colour\": 1}",                 /* unknown key */
        "{\"name\": \"x\", \"env\": {\"NCCL_NVLS_ENABLE\": \"1\"}}",     /* NVLS on */
        "{\"name\": \"x\", \"env\": {}, \"applies_when\": {\"gpus\": 2}}", /* unknown bound */
        "{\"name\": \"x\", \"env\": {}, \"applies_when\": {\"min_nodes\": 0}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dl_profile_t p;
        if (load_text(bad[i], &p) != DL_ERR_INPUT) {
            print_error("accepted: %s\n", bad[i]);
            fail();
        }
    }
}

/* A backend that runs nothing for real and cannot do avg: the worker's
 * fault-injection wrapper must carry that to the plan. */
static int fake_runs;
static dl_status_t f_prepare(void *ctx, const dl_case_t *c) { (void)ctx; (void)c; return DL_OK; }
static dl_status_t f_run(void *ctx, const dl_case_t *c, int iters, double *times, double *total)
{
    (void)ctx;
    fake_runs += c->op == DL_OP_AVG;
    for (int i = 0; times && i < iters; i++)
        times[i] = 1e-6;
    *total = iters * 1e-6;
    return DL_OK;
}
static dl_status_t f_check(void *ctx, const dl_case_t *c, uint64_t *wrong)
{
    (void)ctx; (void)c;
    *wrong = 0;
    return DL_OK;
}
static int f_supports(const dl_case_t *c, char *why, size_t len)
{
    snprintf(why, len, "no avg here");
    return c->op != DL_OP_AVG;
}
static dl_status_t one_max(void *a, double *v, size_t n) { (void)a; (void)v; (void)n; return DL_OK; }
static dl_status_t one_sum(void *a, uint64_t *v, size_t n) { (void)a; (void)v; (void)n; return DL_OK; }
static dl_status_t one_gather(void *a, double v, double *out) { (void)a; out[0] = v; return DL_OK; }
static int results;
static dl_status_t count_result(void *a, dl_result_t *r) { (void)a; (void)r; results++; return DL_OK; }

static void wrapper_keeps_supports(void **state)
{
    (void)state;
    const dl_backend_ops_t fake = {.name = "fake", .caps = DL_CAP_MODELLED,
                                   .prepare = f_prepare, .run = f_run, .check = f_check,
                                   .supports = f_supports};
    dl_inject_wrap_t iw;
    dl_inject_wrap(&iw, NULL, &fake, NULL, 0, "default");
    uint64_t sizes[] = {8, 64};
    dl_plan_t p = {.kind = DL_PLAN_SWEEP,
                   .sweep = {.colls = 1u << DL_COLL_ALLREDUCE, .dtypes = 1u << DL_DT_FLOAT32,
                             .ops = (1u << DL_OP_SUM) | (1u << DL_OP_AVG), .sizes = sizes,
                             .nsizes = 2},
                   .places = 1, .mo = {.warmup = 1, .iters = 2, .check = 1, .min_iters = 1,
                                       .max_iters = 2}};
    dl_xcomm_t x = {.max_doubles = one_max, .sum_u64 = one_sum, .gather_double = one_gather,
                    .rank = 0, .nranks = 1};
    fake_runs = results = 0;
    assert_int_equal(dl_plan_run(&p, &iw.ops, &iw, &x, count_result, NULL), DL_OK);
    assert_int_equal(results, 2);   /* sum at both sizes */
    assert_int_equal(fake_runs, 0); /* avg never reached the backend */
    assert_int_equal(dl_plan_cases(&p, &iw.ops, 1), 2);
}

/* DLCOMM_INJECT is parsed strictly: every malformed text is refused. */
static void inject_parse_strict(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "hang", "hang:", "hang: 0", "hang:0:mpi:2", "hang:0:ring:2:extra", "slow:0:*:inf",
        "slow:0:*:1e308", "slow:0:*:1", "slow:0:*:0.5", "slow:0:*:nan", "slow:0:*:", "hang:x",
        "hang:-2", "hang:2147483648", "hang:+1", "hang:1.5", "bogus:0", "HANG:0", ":0",
        "hang:0:", "hang:0:bad name", "corrupt:0:*:3"};
    dl_inject_t inj;
    dl_log_set_mute(1);
    for (size_t i = 0; i < DL_ARRAY_SIZE(bad); i++)
        if (dl_inject_parse(bad[i], &inj) != DL_ERR_USAGE)
            fail_msg("DLCOMM_INJECT='%s' was accepted", bad[i]);
    dl_log_set_mute(0);
    assert_int_equal(dl_inject_parse("slow:3:ring:2.5", &inj), DL_OK);
    assert_int_equal(inj.kind, DL_INJECT_SLOW);
    assert_int_equal(inj.rank, 3);
    assert_string_equal(inj.profile, "ring");
    assert_true(inj.factor == 2.5);
    assert_int_equal(dl_inject_parse("hang:*", &inj), DL_OK);
    assert_int_equal(inj.rank, -1);
    assert_int_equal(dl_inject_active(&inj, 7, "default"), DL_INJECT_HANG);
    assert_int_equal(dl_inject_parse("crash:1:*", &inj), DL_OK);
    assert_int_equal(dl_inject_active(&inj, 0, NULL), DL_INJECT_NONE);
    /* Every kind acts on every backend, or is refused there. */
    dl_log_set_mute(1);
    assert_int_equal(dl_inject_validate(&inj, dl_backend_find("mpi"), 2), DL_ERR_USAGE);
    assert_int_equal(dl_inject_validate(&inj, dl_backend_find("sim"), 2), DL_OK);
    assert_int_equal(dl_inject_validate(&inj, dl_backend_find("sim"), 1), DL_ERR_USAGE);
    dl_log_set_mute(0);
}

/* A profile's reason is the worker's error, not a note it wrote after it. */
static void last_error_is_the_error(void **state)
{
    (void)state;
    char path[] = "/tmp/dlcomm-lastXXXXXX", buf[200];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *log = "dlcomm: worker rank 0/1\n"
                      "dlcomm: error: rank 0: allreduce did not finish within 7 s\n"
                      "dlcomm: rank 0: teardown: communicator 0.3 s\n";
    assert_int_equal(write(fd, log, strlen(log)), (ssize_t)strlen(log));
    close(fd);
    dl_worker_last_error(path, 0, buf, sizeof(buf));
    assert_string_equal(buf, "rank 0: allreduce did not finish within 7 s");
    dl_worker_last_error(path, 1, buf, sizeof(buf));
    assert_string_equal(buf, "rank 0: allreduce did not finish within 7 s");
    /* No error line: the last line. */
    fd = open(path, O_WRONLY | O_TRUNC);
    const char *quiet = "dlcomm: worker rank 0/1\ndlcomm: warning: slow\n";
    assert_int_equal(write(fd, quiet, strlen(quiet)), (ssize_t)strlen(quiet));
    close(fd);
    dl_worker_last_error(path, 0, buf, sizeof(buf));
    assert_string_equal(buf, "warning: slow");
    dl_worker_last_error(path, 1, buf, sizeof(buf)); /* a hang's report wants an error */
    assert_string_equal(buf, "");
    unlink(path);
}

/* A real worker's NCCL log (one H200, profile p2p-off; the 64 identical
 * one-rank ring lines left out): what NCCL said it did. */
static void ncclog_reads_a_real_log(void **state)
{
    (void)state;
    cJSON *o = dl_ncclog_parse(DL_TEST_DATA "/h200-p2p-off.nccl.log");
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "nccl_version")->valuestring, "2.28.3+cuda13.0");
    assert_string_equal(cJSON_GetObjectItem(o, "network")->valuestring, "Socket");
    cJSON *env = cJSON_GetObjectItem(o, "env_applied");
    assert_string_equal(cJSON_GetObjectItem(env, "NCCL_P2P_DISABLE")->valuestring, "1");
    assert_string_equal(cJSON_GetObjectItem(env, "NCCL_NVLS_ENABLE")->valuestring, "0");
    assert_int_equal(cJSON_GetArraySize(env), 2);
    assert_true(cJSON_GetObjectItem(o, "init_s")->valuedouble == 0.40);
    assert_int_equal(cJSON_GetObjectItem(o, "channels")->valueint, 0); /* one rank: no links */
    /* The profile's own value agrees; another one is named. */
    char buf[200];
    cJSON *want = cJSON_Parse("{\"NCCL_P2P_DISABLE\": \"1\", \"NCCL_ALGO\": \"Ring\"}");
    assert_null(dl_ncclog_contradiction(o, want, NULL, buf, sizeof(buf)));
    cJSON_ReplaceItemInObject(want, "NCCL_P2P_DISABLE", cJSON_CreateString("0"));
    assert_non_null(dl_ncclog_contradiction(o, want, NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "NCCL_P2P_DISABLE=0 in the profile but NCCL took 1");
    cJSON_Delete(want);
    cJSON_Delete(o);
    assert_null(dl_ncclog_parse(DL_TEST_DATA "/no-such.log"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames_round_trip),
        cmocka_unit_test(bad_frames_refused),
        cmocka_unit_test(profile_loads),
        cmocka_unit_test(profile_refusals),
        cmocka_unit_test(wrapper_keeps_supports),
        cmocka_unit_test(inject_parse_strict),
        cmocka_unit_test(last_error_is_the_error),
        cmocka_unit_test(ncclog_reads_a_real_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
