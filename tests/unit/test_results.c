/* results: the run document written to disk and read back, run.csv, and the
 * environment allow-list. */
#include "unit_helpers.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>

#include "results/results.h"

static const char *const csv_header =
    "profile,backend,modelled,collective,dtype,op,root,placement,bytes_requested,bytes,count,"
    "ranks,iterations,converged,time_us_mean,time_us_p50,time_us_p95,time_us_p99,time_us_min,"
    "time_us_max,time_us_stdev,time_us_ci95,avg_us,algbw_gbps,busbw_gbps,wrong,group,group_ranks,stop";

/* A result as the measurement loop would leave it on rank 0. */
static void make_result(dl_result_t *r, dl_coll_id_t id, dl_dtype_t dt, dl_op_t op,
                        dl_place_t place, uint64_t bytes, int n, uint64_t *wrong, double *means)
{
    memset(r, 0, sizeof(*r));
    dl_case_init(&r->c, dl_colls[id], dt, op, place, 1, bytes, n, 0);
    r->nranks = n;
    const double t[] = {10e-6, 12e-6, 11e-6, 30e-6};
    assert_int_equal(dl_stats_compute(t, 4, &r->t), DL_OK);
    r->avg_s = 11.5e-6;
    r->algbw_gbps = dl_algbw(r->c.counts.bytes, r->t.mean);
    r->busbw_gbps = dl_busbw(r->c.coll, n, r->c.counts.bytes, r->t.mean);
    r->wrong_per_rank = wrong;
    r->rank_mean_s = means;
    for (int i = 0; i < n; i++)
        r->wrong += wrong[i];
    r->converged = 1;
    r->checked = 1;
}

static char tmpdir[64];
/* Paths below tmpdir: short names only. */

static int setup_dir(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/dlcomm-unit-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))) {
            snprintf(p, sizeof(p), "%s/%s", tmpdir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    return rmdir(tmpdir);
}

static cJSON *read_json(const char *name)
{
    char path[256], *text;
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    assert_int_equal(dl_read_file(path, &text, NULL), DL_OK);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v)) {
        print_error("'%s' is not a number in the run document\n", k);
        fail();
    }
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsString(v)) {
        print_error("'%s' is not a string in the run document\n", k);
        fail();
    }
    return v->valuestring;
}

static void json_round_trip(void **state)
{
    (void)state;
    cJSON *run = dl_record_new("dlcomm sweep -c allreduce");
    cJSON *prof = dl_record_add_profile(run, "default", "mpi", 0);
    uint64_t w1[4] = {0, 0, 0, 0}, w2[4] = {0, 3, 0, 0};
    double m1[4] = {1e-5, 2e-5, 3e-5, 4e-5}, m2[4] = {5e-6, 5e-6, 5e-6, 5e-6};
    dl_result_t a, b;
    make_result(&a, DL_COLL_ALLREDUCE, DL_DT_BFLOAT16, DL_OP_MAX, DL_PLACE_OUT, 1000, 4, w1, m1);
    make_result(&b, DL_COLL_BROADCAST, DL_DT_INT8, DL_OP_SUM, DL_PLACE_IN, 64, 4, w2, m2);
    dl_record_add_row(prof, &a);
    dl_record_add_row(prof, &b);
    cJSON *p2 = dl_record_add_profile(run, "sim-ring", "sim", 1);
    dl_record_add_row(p2, &a);
    assert_int_equal(dl_record_write(run, tmpdir), DL_OK);
    cJSON_Delete(run);

    cJSON *j = read_json("run.json");
    assert_int_equal(num(j, "schema"), DL_RECORD_SCHEMA);
    assert_string_equal(str(j, "tool"), "dlcomm");
    assert_string_equal(str(j, "command"), "dlcomm sweep -c allreduce");
    assert_int_equal(strlen(str(j, "started")), strlen("2026-01-01T00:00:00Z"));
    const cJSON *profs = cJSON_GetObjectItem(j, "profiles");
    assert_int_equal(cJSON_GetArraySize(profs), 2);
    const cJSON *p = cJSON_GetArrayItem(profs, 0);
    assert_string_equal(str(p, "name"), "default");
    assert_string_equal(str(p, "backend"), "mpi");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(p, "modelled")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(profs, 1), "modelled")));
    assert_string_equal(str(p, "status"), "running");

    const cJSON *rows = cJSON_GetObjectItem(p, "results");
    assert_int_equal(cJSON_GetArraySize(rows), 2);
    const cJSON *r = cJSON_GetArrayItem(rows, 0);
    assert_string_equal(str(r, "collective"), "allreduce");
    assert_string_equal(str(r, "dtype"), "bfloat16");
    assert_string_equal(str(r, "op"), "max");
    assert_int_equal(num(r, "root"), -1); /* allreduce has none */
    assert_string_equal(str(r, "placement"), "out");
    assert_int_equal(num(r, "bytes_requested"), 1000);
    assert_int_equal(num(r, "bytes"), 1000);
    assert_int_equal(num(r, "count"), 500);
    assert_int_equal(num(r, "ranks"), 4);
    assert_int_equal(num(r, "iterations"), 4);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "converged")));
    const cJSON *t = cJSON_GetObjectItem(r, "time_us"); /* seconds become us */
    assert_near(num(t, "mean"), 15.75, 1e-9);
    assert_near(num(t, "p50"), 11.5, 1e-9);
    assert_near(num(t, "min"), 10, 1e-9);
    assert_near(num(t, "max"), 30, 1e-9);
    assert_near(num(t, "p95"), a.t.p95 * 1e6, 1e-9);
    assert_near(num(t, "p99"), a.t.p99 * 1e6, 1e-9);
    assert_near(num(t, "stdev"), a.t.stdev * 1e6, 1e-9);
    assert_near(num(t, "ci95"), a.t.ci95 * 1e6, 1e-9);
    assert_near(num(r, "avg_us"), 11.5, 1e-9);
    assert_near(num(r, "algbw_gbps"), 1000 / 15.75e-6 / 1e9, 1e-9);
    assert_near(num(r, "busbw_gbps"), 1.5 * 1000 / 15.75e-6 / 1e9, 1e-9);
    assert_near(num(r, "busbw_factor"), 1.5, 0);
    assert_int_equal(num(r, "wrong"), 0);
    const cJSON *rt = cJSON_GetObjectItem(r, "rank_time_us");
    assert_int_equal(cJSON_GetArraySize(rt), 4);
    assert_near(cJSON_GetArrayItem(rt, 3)->valuedouble, 40, 1e-9);

    r = cJSON_GetArrayItem(rows, 1);
    assert_string_equal(str(r, "collective"), "broadcast");
    assert_string_equal(str(r, "op"), "none"); /* moving collectives have none */
    assert_int_equal(num(r, "root"), 1);
    assert_string_equal(str(r, "placement"), "in");
    assert_int_equal(num(r, "wrong"), 3);
    const cJSON *wr = cJSON_GetObjectItem(r, "wrong_per_rank");
    assert_int_equal(cJSON_GetArraySize(wr), 4);
    assert_int_equal(cJSON_GetArrayItem(wr, 1)->valueint, 3);
    assert_int_equal(cJSON_GetArrayItem(wr, 0)->valueint, 0);
    cJSON_Delete(j);
}

static void csv_rows(void **state)
{
    (void)state;
    /* json_round_trip wrote three results in two profiles. */
    char path[256], *text;
    snprintf(path, sizeof(path), "%s/run.csv", tmpdir);
    assert_int_equal(dl_read_file(path, &text, NULL), DL_OK);
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    assert_non_null(line);
    assert_string_equal(line, csv_header);
    int ncols = 1;
    for (const char *c = csv_header; *c; c++)
        ncols += *c == ',';
    int rows = 0;
    while ((line = strtok_r(NULL, "\n", &save))) {
        int n = 1;
        for (const char *c = line; *c; c++)
            n += *c == ',';
        assert_int_equal(n, ncols);
        rows++;
        if (rows == 1)
            assert_int_equal(strncmp(line, "default,mpi,0,allreduce,bfloat16,max,-1,out,1000,1000,500,4,4,1,", 63), 0);
        if (rows == 3)
            assert_int_equal(strncmp(line, "sim-ring,sim,1,allreduce,", 25), 0);
    }
    assert_int_equal(rows, 3);
    free(text);
}

/* The atomic write leaves nothing but the two files behind. */
static void no_temporaries(void **state)
{
    (void)state;
    DIR *d = opendir(tmpdir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            assert_true(strcmp(e->d_name, "run.json") == 0 || strcmp(e->d_name, "run.csv") == 0);
            n++;
        }
    closedir(d);
    assert_int_equal(n, 2);
}

static void write_fails_cleanly(void **state)
{
    (void)state;
    cJSON *run = dl_record_new("x");
    unit_capture_t c;
    unit_capture_begin(&c);
    dl_status_t st = dl_record_write(run, "/nonexistent-dir-dlcomm/sub");
    const char *msg = unit_capture_end(&c);
    cJSON_Delete(run);
    assert_int_equal(st, DL_ERR_WRITE); /* made but not kept: the run broke, exit 3 */
    assert_int_equal(dl_status_exit_code(st), 3);
    assert_non_null(strstr(msg, "cannot write"));
}

static void env_allow_list(void **state)
{
    (void)state;
    static const char *const yes[] = {"NCCL_DEBUG", "NCCL_IB_HCA", "NCCL_P2P_DISABLE", "UCX_TLS",
                                      "OMPI_MCA_btl", "HOROVOD_FUSION_THRESHOLD",
                                      "CUDA_VISIBLE_DEVICES", "SLURM_JOB_ID", "NCCL_IB_PKEY",
                                      "NCCL_SOCKET_IFNAME", "NCCL_NET_GDR_LEVEL"};
    static const char *const no[] = {
        "PATH", "HOME", "USER", "LD_LIBRARY_PATH", "NCCL_AUTH_TOKEN", "GITHUB_TOKEN",
        "NCCL_API_KEY", "AWS_SECRET_ACCESS_KEY", "HOROVOD_PASSWORD", "UCX_KEY_FILE",
        "OMPI_MCA_orte_hnp_uri", "OMPI_MCA_orte_ess_num_procs", "OMPI_MCA_ess_base_jobid",
        "OMPI_MCA_pmix", "PMIX_MCA_psec", "SLURM_JOB_ACCOUNT", "NCCL", "CUDA_VISIBLE_DEVICES_X",
        "nccl_debug", "", "HOROVOD_api_key", "NCCL_my_secret", "HOROVOD_Token",
        "OMPI_MCA_x_password", "HOROVOD_ApiKey", "UCX_Credentials", "NCCL_ib_pkey_token",
        "NCCL_DB_URI", "NCCL_my_passwd", "HOROVOD_AuthHeader"};
    for (size_t i = 0; i < DL_ARRAY_SIZE(yes); i++)
        if (!dl_env_allowed(yes[i])) {
            print_error("%s refused\n", yes[i]);
            fail();
        }
    for (size_t i = 0; i < DL_ARRAY_SIZE(no); i++)
        if (dl_env_allowed(no[i])) {
            print_error("%s allowed\n", no[i]);
            fail();
        }
}

static void env_recorded(void **state)
{
    (void)state;
    setenv("NCCL_UNIT_TEST_SETTING", "42", 1);
    setenv("NCCL_UNIT_TEST_TOKEN", "hunter2", 1);
    setenv("UNIT_TEST_OTHER", "x", 1);
    cJSON *env = dl_env_allowlist();
    assert_string_equal(str(env, "NCCL_UNIT_TEST_SETTING"), "42");
    assert_null(cJSON_GetObjectItem(env, "NCCL_UNIT_TEST_TOKEN"));
    assert_null(cJSON_GetObjectItem(env, "UNIT_TEST_OTHER"));
    assert_null(cJSON_GetObjectItem(env, "PATH"));
    const cJSON *e;
    cJSON_ArrayForEach(e, env) assert_true(dl_env_allowed(e->string));
    cJSON_Delete(env);
}

/* The choice in one word, as the table, report and compare write it, and
 * what counts as a change: a part one side does not know is none; names
 * compare without case; the ranks' disagreement alone is none. */
static void choice_words(void **state)
{
    (void)state;
    char t[48];
    const struct {
        const char *algo, *proto;
        int nch, mixed;
        const char *want;
    } cases[] = {
        {"Ring", "LL", 2, 0, "Ring/LL/2"},  {"Tree", "Simple", 0, 0, "Tree/Simple"},
        {"Ring", "", 0, 0, "Ring"},         {"", "LL128", 0, 0, "?/LL128"},
        {"Ring", "", 4, 0, "Ring/?/4"},     {"Ring", "LL", 2, 1, "Ring/LL/2*"},
        {"", "", 0, 0, "-"},                {"", "", 0, 1, "-"},
    };
    for (size_t i = 0; i < DL_ARRAY_SIZE(cases); i++) {
        dl_rec_choice_text(cases[i].algo, cases[i].proto, cases[i].nch, cases[i].mixed, t, sizeof(t));
        assert_string_equal(t, cases[i].want);
    }
    dl_row_t a, b;
    dl_rec_row_init(&a);
    dl_rec_row_init(&b);
    snprintf(a.algo, sizeof(a.algo), "Ring");
    snprintf(a.proto, sizeof(a.proto), "LL");
    a.nchannels = 2;
    assert_false(dl_row_choice_differs(&a, &b)); /* new says nothing: no change */
    snprintf(b.algo, sizeof(b.algo), "RING");
    snprintf(b.proto, sizeof(b.proto), "LL");
    b.choice_mixed = 1;
    assert_false(dl_row_choice_differs(&a, &b));
    b.nchannels = 4;
    assert_true(dl_row_choice_differs(&a, &b));
    b.nchannels = 2;
    snprintf(b.proto, sizeof(b.proto), "LL128");
    assert_true(dl_row_choice_differs(&a, &b));
    snprintf(b.proto, sizeof(b.proto), "LL");
    snprintf(b.algo, sizeof(b.algo), "Tree");
    assert_true(dl_row_choice_differs(&a, &b));
}

/* The table's chose column: the backend's choice, "-" when it said nothing. */
static void table_chose_column(void **state)
{
    (void)state;
    uint64_t wrong[2] = {0, 0};
    double means[2] = {1e-5, 1e-5};
    dl_result_t r;
    make_result(&r, DL_COLL_ALLREDUCE, DL_DT_FLOAT32, DL_OP_SUM, DL_PLACE_OUT, 1024, 2, wrong, means);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    dl_table_row(f, &r);
    r.choice = (dl_choice_t){.algo = "Tree", .proto = "LL128", .nchannels = 8, .from = "profiler"};
    r.choice_mixed = 1;
    dl_table_row(f, &r);
    fclose(f);
    char *second = strchr(buf, '\n') + 1, *dash = strstr(buf, "               - ");
    assert_true(dash && dash < second); /* the 15-wide column, before stop */
    assert_non_null(strstr(second, "   Tree/LL128/8* "));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_round_trip),  cmocka_unit_test(csv_rows),
        cmocka_unit_test(no_temporaries),   cmocka_unit_test(write_fails_cleanly),
        cmocka_unit_test(env_allow_list),   cmocka_unit_test(env_recorded),
        cmocka_unit_test(choice_words),     cmocka_unit_test(table_chose_column),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
