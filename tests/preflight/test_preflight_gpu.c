/* GPU health verdicts from NVML figures. No GPU here can be made faulty on
 * purpose, so the figures NVML would report are written out, in the JSON
 * form dl_gpu_json gives them, and judged by the code preflight uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "preflight/internal.h"

static cJSON *healthy(int index)
{
    cJSON *g = cJSON_CreateObject();
    cJSON_AddNumberToObject(g, "index", index);
    cJSON_AddStringToObject(g, "bus_id", index ? "0000:18:00.0" : "0000:17:00.0");
    const char *zero[] = {"ecc_volatile_uncorrected", "ecc_aggregate_uncorrected",
                          "retired_pages_dbe", "retired_pages_pending",
                          "remapped_rows_uncorrectable", "remapped_rows_pending",
                          "remapped_rows_failure"};
    for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
        cJSON_AddNumberToObject(g, zero[i], 0);
    cJSON_AddNumberToObject(g, "clock_event_reasons", 1); /* GPU idle: not a fault */
    cJSON_AddNumberToObject(g, "temperature_c", 40);
    cJSON_AddNumberToObject(g, "pcie_gen", 5);
    cJSON_AddNumberToObject(g, "pcie_gen_max", 5);
    cJSON_AddNumberToObject(g, "pcie_width", 16);
    cJSON_AddNumberToObject(g, "pcie_width_max", 16);
    cJSON_AddNumberToObject(g, "nvlink_total", 18);
    cJSON_AddNumberToObject(g, "nvlink_up", 18);
    return g;
}

/* obj[key] as a string: a missing field fails the test, never a null access. */
static const char *str_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(obj, key);
    assert_non_null(v);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

/* Judges one GPU with one figure changed; returns the check's status. */
static const char *judge(const char *key, double value, int *blamed)
{
    static char status[16];
    dl_pf_opts_t o = {.max_temp_c = 85};
    char names[1][256] = {"host3"};
    pf_ctx_t c = {.o = &o, .rank = 0};
    c.lay.nhosts = 1;
    c.lay.names = names;
    cJSON *doc = cJSON_CreateObject();
    c.doc = doc;
    c.checks = cJSON_AddArrayToObject(doc, "checks");
    c.v_gpus = cJSON_AddArrayToObject(doc, "gpus");
    cJSON *host = cJSON_CreateObject(), *g = healthy(2);
    cJSON_AddStringToObject(host, "nvml", "ok");
    if (key)
        cJSON_ReplaceItemInObject(g, key, cJSON_CreateNumber(value));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(host, "gpus"), g);
    assert_int_equal(pf_gpu_judge(&c, 0, host), DL_OK);
    assert_int_equal(cJSON_GetArraySize(c.checks), 1);
    cJSON *e = cJSON_GetArrayItem(c.checks, 0);
    assert_string_equal(str_of(e, "subject"), "host3 gpu2");
    snprintf(status, sizeof(status), "%s", str_of(e, "status"));
    *blamed = cJSON_GetArraySize(c.v_gpus);
    if (*blamed)
        assert_string_equal(str_of(cJSON_GetArrayItem(c.v_gpus, 0), "host"), "host3");
    cJSON_Delete(host);
    cJSON_Delete(doc);
    return status;
}

static void verdicts(void **state)
{
    (void)state;
    static const struct {
        const char *key;
        double value;
        const char *want;
    } cases[] = {
        {NULL, 0, "pass"},
        {"ecc_volatile_uncorrected", 3, "fail"},
        {"ecc_aggregate_uncorrected", 3, "warn"},
        {"retired_pages_pending", 1, "fail"},
        {"retired_pages_dbe", 2, "warn"},
        {"remapped_rows_pending", 1, "fail"},
        {"remapped_rows_failure", 1, "fail"},
        {"clock_event_reasons", 0x8, "fail"},   /* HW slowdown */
        {"clock_event_reasons", 0x40, "fail"},  /* HW thermal */
        {"clock_event_reasons", 0x80, "fail"},  /* power brake */
        {"clock_event_reasons", 0x20, "warn"},  /* SW thermal */
        {"clock_event_reasons", 0x4, "pass"},   /* SW power cap: the normal limit */
        {"temperature_c", 91, "warn"},
        {"pcie_width", 8, "fail"},
        {"pcie_gen", 3, "warn"},
        {"nvlink_up", 17, "fail"},
        {"ecc_volatile_uncorrected", -1, "pass"}, /* not supported: not judged */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int blamed;
        const char *got = judge(cases[i].key, cases[i].value, &blamed);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("%s = %g: %s, want %s", cases[i].key, cases[i].value, got, cases[i].want);
        assert_int_equal(blamed, strcmp(cases[i].want, "fail") == 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(verdicts)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
