/* --split: nccl-tests' spellings parsed, the groups each rank lands in, the
 * refusals (one line each), and a group's row in run.json and run.csv. */
#include "unit_helpers.h"

#include <cjson/cJSON.h>

#include "backends/backends.h"
#include "results/results.h"

static dl_split_t parsed(const char *text, int world)
{
    dl_split_t s;
    assert_int_equal(dl_split_parse(text, &s), DL_OK);
    assert_int_equal(dl_split_check(&s, world), DL_OK);
    return s;
}

static void spellings(void **state)
{
    (void)state;
    const char *mod2[] = {"MOD:2", "mod:2", "MOD 2", "MOD2", "%2", "MOD:0x2", "%0b10"};
    for (size_t i = 0; i < DL_ARRAY_SIZE(mod2); i++) {
        dl_split_t s = parsed(mod2[i], 8);
        assert_int_equal(s.op, DL_SPLIT_MOD);
        assert_int_equal(s.value, 2);
        assert_int_equal(s.groups, 2);
        assert_int_equal(s.size, 4);
    }
    assert_int_equal(parsed("/4", 8).op, DL_SPLIT_DIV);
    assert_int_equal(parsed("&0x7", 16).op, DL_SPLIT_AND);
    assert_int_equal(parsed("OR:0x7", 16).op, DL_SPLIT_OR);
    dl_split_t none;
    assert_int_equal(dl_split_parse(NULL, &none), DL_OK);
    assert_int_equal(none.op, DL_SPLIT_NONE);
    assert_int_equal(dl_split_check(&none, 5), DL_OK);
    assert_int_equal(none.groups, 1);
    assert_int_equal(none.size, 5);
}

/* Rank r's group and place, against nccl-tests' colour rule worked by hand. */
static void groups(void **state)
{
    (void)state;
    int m[8];
    dl_split_t s = parsed("MOD:4", 16); /* one rank per node of 4 "rails" */
    assert_int_equal(dl_split_group(&s, 13), 1);
    assert_int_equal(dl_split_rank(&s, 13), 3);
    assert_int_equal(dl_split_members(&s, 2, m), 4);
    assert_int_equal(m[0], 2);
    assert_int_equal(m[3], 14);
    s = parsed("DIV:8", 16); /* one group per node of 8 */
    assert_int_equal(dl_split_group(&s, 9), 1);
    assert_int_equal(dl_split_rank(&s, 9), 1);
    s = parsed("AND:0x7", 16); /* = MOD:8 */
    assert_int_equal(s.groups, 8);
    assert_int_equal(dl_split_group(&s, 13), 5);
    assert_int_equal(dl_split_members(&s, 5, m), 2);
    assert_int_equal(m[1], 13);
    s = parsed("OR:0x7", 16); /* = DIV:8: colours 7 and 15 are groups 0 and 1 */
    assert_int_equal(s.groups, 2);
    assert_int_equal(dl_split_group(&s, 3), 0);
    assert_int_equal(dl_split_group(&s, 12), 1);
    assert_int_equal(dl_split_rank(&s, 12), 4);
    s = parsed("MOD:1", 1); /* one GPU: one group of one */
    assert_int_equal(s.groups, 1);
    assert_int_equal(dl_split_group(&s, 0), 0);
}

static void refused(const char *text, int world, const char *want)
{
    unit_capture_t cap;
    dl_split_t s;
    unit_capture_begin(&cap);
    dl_status_t st = dl_split_parse(text, &s);
    if (st == DL_OK)
        st = dl_split_check(&s, world);
    const char *err = unit_capture_end(&cap);
    assert_int_equal(st, DL_ERR_USAGE);
    assert_int_equal(unit_lines(err), 1);
    if (!strstr(err, want)) {
        print_error("'%s' on %d ranks: %s, want '%s'\n", text, world, err, want);
        fail();
    }
}

static void refusals(void **state)
{
    (void)state;
    refused("", 4, "no mode");
    refused("XOR:2", 4, "no mode");
    refused("MOD:", 4, "whole number");
    refused("MOD:2x", 4, "whole number");
    refused("MOD:-1", 4, "whole number");
    refused("MOD:0", 4, "at least 1");
    refused("/0", 4, "at least 1");
    refused("MOD:99999999999", 4, "whole number");
    refused("MOD:3", 4, "3 does not divide the 4 ranks");
    refused("DIV:3", 4, "3 does not divide the 4 ranks");
    refused("AND:1", 3, "3 ranks make 2 groups of unequal size");
    refused("OR:2", 3, "unequal size");
}

/* A group's row: its group and world ranks in run.json, the same in run.csv. */
static void group_row(void **state)
{
    (void)state;
    dl_result_t r;
    memset(&r, 0, sizeof(r));
    dl_case_init(&r.c, dl_colls[DL_COLL_ALLREDUCE], DL_DT_FLOAT32, DL_OP_SUM, DL_PLACE_OUT, 0,
                 1024, 2, 0);
    r.nranks = r.bus_ranks = 2;
    r.t.n = 10;
    r.t.mean = r.t.p50 = 1e-5;
    r.split = parsed("MOD:2", 4);
    r.group = 1;
    cJSON *run = dl_record_new("test");
    cJSON *p = dl_record_add_profile(run, "mpi", "mpi", 0);
    dl_record_add_row(p, &r);
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(p, "results"), 0);
    assert_int_equal(cJSON_GetObjectItem(row, "group")->valueint, 1);
    cJSON *gr = cJSON_GetObjectItem(row, "group_ranks");
    assert_int_equal(cJSON_GetArraySize(gr), 2);
    assert_int_equal(cJSON_GetArrayItem(gr, 0)->valueint, 1);
    assert_int_equal(cJSON_GetArrayItem(gr, 1)->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(row, "ranks")->valueint, 2);
    char *csv = dl_record_csv(run);
    assert_non_null(strstr(csv, ",group,group_ranks,stop\n"));
    assert_non_null(strstr(csv, ",1,1 3,ci\n"));
    free(csv);
    cJSON_Delete(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spellings), cmocka_unit_test(groups), cmocka_unit_test(refusals),
        cmocka_unit_test(group_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
