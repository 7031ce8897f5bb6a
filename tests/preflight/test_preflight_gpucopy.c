/* The copy checks' arithmetic and verdicts (src/preflight/gpucopy.c): PCIe
 * generation x width to GB/s, the expectation and where it came from, the
 * PASS/WARN/FAIL cut, a far NUMA node, a CUDA failure; and the check as it
 * runs on this host: measured where a GPU is visible, else one SKIP that
 * says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "preflight/gpucopy.h"
#include "preflight/internal.h"

static void pcie_rates(void **state)
{
    (void)state;
    assert_float_equal(dl_gc_pcie_gbps(1, 1), 0.25, 1e-9);         /* 2.5 GT/s 8b/10b */
    assert_float_equal(dl_gc_pcie_gbps(2, 8), 4.0, 1e-9);
    assert_float_equal(dl_gc_pcie_gbps(3, 16), 15.754, 1e-3);      /* 8 GT/s 128b/130b */
    assert_float_equal(dl_gc_pcie_gbps(4, 16), 31.508, 1e-3);
    assert_float_equal(dl_gc_pcie_gbps(5, 16), 63.015, 1e-3);
    assert_float_equal(dl_gc_pcie_gbps(5, 8), dl_gc_pcie_gbps(5, 16) / 2, 1e-9);
    assert_float_equal(dl_gc_pcie_gbps(6, 16), 118.0, 1e-3);       /* FLIT 236/256 */
    assert_true(dl_gc_pcie_gbps(0, 16) < 0);
    assert_true(dl_gc_pcie_gbps(7, 16) < 0);
    assert_true(dl_gc_pcie_gbps(5, -1) < 0); /* NVML does not know */
}

static void expectations(void **state)
{
    (void)state;
    dl_gc_expect_t e;
    dl_gc_system_t none = {-1, -1}, h200 = {4800, 63.0};
    dl_gc_expect(DL_GC_H2D, &none, 5, 16, &e);
    assert_float_equal(e.gbps, 63.015 * DL_GC_PCIE_EFFICIENCY, 1e-2);
    assert_non_null(strstr(e.source, "NVML max PCIe gen5 x16"));
    dl_gc_expect(DL_GC_D2H, &h200, 4, 8, &e); /* the system's figure wins over NVML's */
    assert_float_equal(e.gbps, 63.0 * DL_GC_PCIE_EFFICIENCY, 1e-9);
    assert_non_null(strstr(e.source, "host_link_gbyte_s"));
    dl_gc_expect(DL_GC_H2D, NULL, -1, -1, &e);
    assert_true(e.gbps < 0);
    assert_non_null(strstr(e.source, "none"));
    dl_gc_expect(DL_GC_D2D, &h200, 5, 16, &e);
    assert_float_equal(e.gbps, 4800 / 2.0 * DL_GC_HBM_EFFICIENCY, 1e-9);
    dl_gc_expect(DL_GC_D2D, &none, 5, 16, &e); /* NVML says nothing of memory */
    assert_true(e.gbps < 0);

    /* A gen5 x16 link measures about 55 GB/s; at x8 or gen4, half that. */
    dl_gc_expect(DL_GC_H2D, &none, 5, 16, &e);
    assert_int_equal(dl_gc_judge(55, e.gbps), DL_PF_PASS);
    assert_int_equal(dl_gc_judge(35, e.gbps), DL_PF_WARN);
    assert_int_equal(dl_gc_judge(27, e.gbps), DL_PF_FAIL);
    assert_int_equal(dl_gc_judge(DL_GC_PASS_FRACTION * 10, 10), DL_PF_PASS);
    assert_int_equal(dl_gc_judge(DL_GC_FAIL_FRACTION * 10, 10), DL_PF_WARN);
    assert_int_equal(dl_gc_judge(1, -1), DL_PF_PASS); /* nothing to judge by: reported */
}

typedef struct {
    pf_ctx_t c;
    dl_pf_opts_t o;
    char names[1][256];
    int host_of[2], local_of[2];
    cJSON *doc;
} ctx_t;

static void ctx_init(ctx_t *t)
{
    memset(t, 0, sizeof(*t));
    t->o.gpu_checks = 1;
    snprintf(t->names[0], sizeof(t->names[0]), "gpu7");
    t->c.o = &t->o;
    t->c.lay.nhosts = 1;
    t->c.lay.nranks = 2;
    t->c.lay.names = t->names;
    t->c.lay.host_of = t->host_of;
    t->c.lay.local_of = t->local_of;
    t->local_of[1] = 1;
    t->doc = cJSON_CreateObject();
    t->c.doc = t->doc;
    t->c.checks = cJSON_AddArrayToObject(t->doc, "checks");
    t->c.v_gpus = cJSON_AddArrayToObject(t->doc, "gpus");
}

/* A measured record as a rank sends it to rank 0. */
static cJSON *record(int rank, double d2d, double h2d, double d2h, int gpu_numa, int mem_numa)
{
    dl_gc_result_t r = {.device = rank, .gpu_numa = gpu_numa, .rank_numa = mem_numa,
                        .mem_numa = mem_numa, .cpu_numa = mem_numa, .bytes = DL_GC_BYTES,
                        .repeats = DL_GC_REPEATS, .gbps = {d2d, h2d, d2h}};
    snprintf(r.bus_id, sizeof(r.bus_id), "0000:%02x:00.0", 0x17 + rank);
    cJSON *o = dl_gc_json(&r);
    cJSON_AddNumberToObject(o, "rank", rank);
    cJSON_AddStringToObject(o, "outcome", "measured");
    cJSON_AddNumberToObject(o, "pcie_gen_max", 5);
    cJSON_AddNumberToObject(o, "pcie_width_max", 16);
    return o;
}

static const char *status_of(const cJSON *checks, int i, const char *check)
{
    const cJSON *e = cJSON_GetArrayItem(checks, i);
    assert_non_null(e);
    assert_string_equal(cJSON_GetObjectItem(e, "check")->valuestring, check);
    return cJSON_GetObjectItem(e, "status")->valuestring;
}

static void verdicts(void **state)
{
    (void)state;
    ctx_t t;
    ctx_init(&t);
    dl_gc_system_t h200 = {4800, 63.0};
    char skipped[1] = {0};
    cJSON *ok = record(0, 2050, 55, 54, 0, 0);
    pf_gpu_copy_judge(&t.c, &h200, ok, skipped);
    assert_int_equal(cJSON_GetArraySize(t.c.checks), 3);
    assert_string_equal(status_of(t.c.checks, 0, "gpu-copy"), "pass");
    assert_string_equal(status_of(t.c.checks, 1, "h2d"), "pass");
    assert_string_equal(status_of(t.c.checks, 2, "d2h"), "pass");
    const cJSON *f = cJSON_GetObjectItem(cJSON_GetArrayItem(t.c.checks, 1), "figures");
    assert_float_equal(cJSON_GetObjectItem(f, "measured_gbps")->valuedouble, 55, 1e-9);
    assert_float_equal(cJSON_GetObjectItem(f, "expected_gbps")->valuedouble, 63.0 * 0.8, 1e-9);
    assert_non_null(strstr(cJSON_GetObjectItem(f, "expected_from")->valuestring, "system"));
    assert_int_equal(cJSON_GetArraySize(t.c.v_gpus), 0);

    /* At x8: H2D/D2H fail and the GPU is named; memory on the far node warns. */
    cJSON *x8 = record(1, 2050, 27, 26, 0, 0), *far = record(1, 2050, 50, 50, 0, 1);
    pf_gpu_copy_judge(&t.c, &h200, x8, skipped);
    assert_string_equal(status_of(t.c.checks, 4, "h2d"), "fail");
    assert_int_equal(cJSON_GetArraySize(t.c.v_gpus), 1);
    pf_gpu_copy_judge(&t.c, NULL, far, skipped);
    assert_string_equal(status_of(t.c.checks, 6, "gpu-copy"), "pass"); /* not judged: no HBM figure */
    assert_string_equal(status_of(t.c.checks, 7, "h2d"), "warn");
    assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(t.c.checks, 7), "message")->valuestring,
                           "host memory on NUMA node 1, CPU on 1, GPU on 0"));

    /* A CUDA failure fails all three figures, with CUDA's words. */
    cJSON *broke = record(0, -1, -1, -1, 0, 0);
    cJSON_ReplaceItemInObject(broke, "outcome", cJSON_CreateString("broke"));
    cJSON_ReplaceItemInObject(broke, "why", cJSON_CreateString("cudaMalloc: out of memory"));
    pf_gpu_copy_judge(&t.c, NULL, broke, skipped);
    assert_int_equal(cJSON_GetArraySize(t.c.checks), 12);
    assert_string_equal(status_of(t.c.checks, 11, "d2h"), "fail");
    assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(t.c.checks, 11), "message")->valuestring,
                           "out of memory"));
    cJSON_Delete(ok);
    cJSON_Delete(x8);
    cJSON_Delete(far);
    cJSON_Delete(broke);
    cJSON_Delete(t.doc);
}

/* The check on this host, through the real measurement: no GPU (or no CUDA
 * in this build) is one SKIP for the host, naming why; a second rank of the
 * host adds no line. With a GPU, three figures, each with its expectation. */
static void this_host(void **state)
{
    (void)state;
    ctx_t t;
    ctx_init(&t);
    char skipped[1] = {0};
    cJSON *a = pf_gpu_copy_mine(&t.c, NULL, -1);
    const char *outcome = cJSON_GetObjectItem(a, "outcome")->valuestring;
    pf_gpu_copy_judge(&t.c, NULL, a, skipped);
    if (strcmp(outcome, "measured") == 0) {
        printf("measured: d2d %.1f h2d %.1f d2h %.1f GB/s\n",
               cJSON_GetObjectItem(a, "d2d_gbps")->valuedouble,
               cJSON_GetObjectItem(a, "h2d_gbps")->valuedouble,
               cJSON_GetObjectItem(a, "d2h_gbps")->valuedouble);
        assert_int_equal(cJSON_GetArraySize(t.c.checks), 3);
        assert_true(cJSON_GetObjectItem(a, "h2d_gbps")->valuedouble > 0);
    } else {
        assert_string_equal(outcome, "skip");
        const char *why = cJSON_GetObjectItem(a, "why")->valuestring;
        assert_true(strstr(why, "no CUDA GPU is visible here") || strstr(why, "built without CUDA") ||
                    strstr(why, "no NVIDIA driver on this host"));
        assert_int_equal(cJSON_GetArraySize(t.c.checks), 1);
        assert_string_equal(status_of(t.c.checks, 0, "gpu-copy"), "skip");
        const char *msg = cJSON_GetObjectItem(cJSON_GetArrayItem(t.c.checks, 0), "message")->valuestring;
        assert_non_null(strstr(msg, why));
        t.c.rank = 1;
        cJSON *b = pf_gpu_copy_mine(&t.c, NULL, -1);
        t.c.rank = 0;
        pf_gpu_copy_judge(&t.c, NULL, b, skipped);
        assert_int_equal(cJSON_GetArraySize(t.c.checks), 1);
        cJSON_Delete(b);
    }
    /* --no-gpu: a SKIP that says so. */
    t.o.gpu_checks = 0;
    skipped[0] = 0;
    cJSON *off = pf_gpu_copy_mine(&t.c, NULL, -1);
    pf_gpu_copy_judge(&t.c, NULL, off, skipped);
    const cJSON *last = cJSON_GetArrayItem(t.c.checks, cJSON_GetArraySize(t.c.checks) - 1);
    assert_non_null(strstr(cJSON_GetObjectItem(last, "message")->valuestring, "--no-gpu"));
    cJSON_Delete(off);
    cJSON_Delete(a);
    cJSON_Delete(t.doc);
}

static dl_status_t system_file(const char *gpu, dl_gc_system_t *s)
{
    char path[] = "/tmp/dlcomm-gpucopy-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "{\"name\": \"t\", \"gpus_per_node\": 1, \"gpu\": %s, \"paths\": "
               "{\"shm\": {\"bw_gbyte_s\": 10, \"lat_us\": 1}, "
               "\"socket\": {\"bw_gbyte_s\": 1, \"lat_us\": 10}}}", gpu);
    fclose(f);
    dl_system_t d;
    dl_status_t st = dl_system_read(path, &d);
    dl_gc_system_from(&d, s);
    unlink(path);
    return st;
}

/* The system description's "gpu" figures: read from the shipped H200 file;
 * an unknown key or a figure that is not positive is refused (the sim's
 * check, which preflight's --system runs first). */
static void system_figures(void **state)
{
    (void)state;
    dl_gc_system_t s;
    dl_system_t d;
    assert_int_equal(dl_system_read(DL_SOURCE_DIR "/topologies/systems/h200-sxm-8.json", &d), DL_OK);
    dl_gc_system_from(&d, &s);
    assert_float_equal(s.memory_gbyte_s, 4800, 1e-9);
    assert_float_equal(s.host_link_gbyte_s, 63.0, 1e-9);
    assert_int_equal(dl_system_read(DL_SOURCE_DIR "/topologies/systems/cpu-host.json", &d), DL_OK);
    dl_gc_system_from(&d, &s);
    assert_true(s.memory_gbyte_s < 0 && s.host_link_gbyte_s < 0);
    assert_int_equal(system_file("{\"host_link_gbyte_s\": 31.5}", &s), DL_OK);
    assert_float_equal(s.host_link_gbyte_s, 31.5, 1e-9);
    assert_true(s.memory_gbyte_s < 0);
    assert_int_equal(system_file("{\"hbm\": 3000}", &s), DL_ERR_INPUT);
    assert_int_equal(system_file("{\"memory_gbyte_s\": -5}", &s), DL_ERR_INPUT);
    assert_int_equal(system_file("{\"memory_gbyte_s\": \"fast\"}", &s), DL_ERR_INPUT);
    assert_int_equal(system_file("[1]", &s), DL_ERR_INPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(pcie_rates), cmocka_unit_test(expectations),
                                       cmocka_unit_test(verdicts), cmocka_unit_test(this_host),
                                       cmocka_unit_test(system_figures)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
