/* util: sizes, size lists, name lists, statistics, the option table. */
#include "unit_helpers.h"

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "backends/backends.h"
#include "sys/launcher.h"
#include "util/util.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)
#define GiB (1024ull * 1024 * 1024)

static uint64_t size_ok(const char *s)
{
    uint64_t v = 0;
    if (dl_size_parse(s, &v) != DL_OK) {
        print_error("dl_size_parse(\"%s\") refused a valid size\n", s);
        fail();
    }
    return v;
}

static void size_parse_accepts(void **state)
{
    (void)state;
    assert_int_equal(size_ok("8"), 8);
    assert_int_equal(size_ok("1"), 1);
    assert_int_equal(size_ok("64K"), 64 * KiB);
    assert_int_equal(size_ok("64k"), 64 * KiB);
    assert_int_equal(size_ok("1M"), MiB);
    assert_int_equal(size_ok("4G"), 4 * GiB);
    assert_int_equal(size_ok("1.5K"), 1536);
    assert_int_equal(size_ok("0.5M"), 512 * KiB);
    assert_int_equal(size_ok("8B"), 8);
    assert_int_equal(size_ok("64KiB"), 64 * KiB);
    assert_int_equal(size_ok("1MiB"), MiB);
    assert_int_equal(size_ok("2GB"), 2 * GiB);
    assert_int_equal(size_ok("1mb"), MiB);
}

static void size_parse_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {"0",  "0K",  "-5",  "-1K", "+8",  "",   "abc", "12Q",
                                      "K",  "1KK", "1 K", "1.3", "0.5", "1e400", "nan", "inf",
                                      "1KiBB", "8x"};
    for (size_t i = 0; i < DL_ARRAY_SIZE(bad); i++) {
        uint64_t v = 12345;
        if (dl_size_parse(bad[i], &v) != DL_ERR_USAGE) {
            print_error("dl_size_parse(\"%s\") accepted it as %llu\n", bad[i],
                        (unsigned long long)v);
            fail();
        }
        assert_int_equal(v, 12345); /* untouched on error */
    }
    uint64_t v;
    assert_int_equal(dl_size_parse(NULL, &v), DL_ERR_USAGE);
}

static void size_format(void **state)
{
    (void)state;
    char b[32];
    dl_size_format(8, b, sizeof(b));
    assert_string_equal(b, "8 B");
    dl_size_format(64 * KiB, b, sizeof(b));
    assert_string_equal(b, "64 KiB");
    dl_size_format(1536, b, sizeof(b));
    assert_string_equal(b, "1.5 KiB");
    dl_size_format(4 * GiB, b, sizeof(b));
    assert_string_equal(b, "4 GiB");
}

static void sizes_by_factor(void **state)
{
    (void)state;
    dl_sizes_t s;
    /* nccl-tests' default sweep: 8 B .. 4 GiB by 2 is 2^3 .. 2^32. */
    assert_int_equal(dl_sizes_build(8, 4 * GiB, 2, 0, &s), DL_OK);
    assert_int_equal(s.n, 30);
    for (size_t i = 0; i < s.n; i++)
        assert_int_equal(s.v[i], 8ull << i);
    dl_sizes_free(&s);
    assert_null(s.v);

    /* Bounds that are not powers: stop at the last size <= max. */
    assert_int_equal(dl_sizes_build(10, 100, 2, 0, &s), DL_OK);
    assert_int_equal(s.n, 4);
    assert_int_equal(s.v[3], 80);
    dl_sizes_free(&s);

    /* Fractional factors round down: 8 12 18 27 40 60. */
    assert_int_equal(dl_sizes_build(8, 64, 1.5, 0, &s), DL_OK);
    static const uint64_t want[] = {8, 12, 18, 27, 40, 60};
    assert_int_equal(s.n, DL_ARRAY_SIZE(want));
    for (size_t i = 0; i < s.n; i++)
        assert_int_equal(s.v[i], want[i]);
    dl_sizes_free(&s);

    assert_int_equal(dl_sizes_build(1 * MiB, 1 * MiB, 2, 0, &s), DL_OK);
    assert_int_equal(s.n, 1);
    dl_sizes_free(&s);
}

static void sizes_by_step(void **state)
{
    (void)state;
    dl_sizes_t s;
    assert_int_equal(dl_sizes_build(1 * KiB, 8 * KiB, 2, 1 * KiB, &s), DL_OK);
    assert_int_equal(s.n, 8);
    for (size_t i = 0; i < s.n; i++)
        assert_int_equal(s.v[i], (i + 1) * KiB);
    dl_sizes_free(&s);
    /* A step makes the factor irrelevant, even an invalid one. */
    assert_int_equal(dl_sizes_build(8, 40, 0, 16, &s), DL_OK);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.v[2], 40);
    dl_sizes_free(&s);
}

static void sizes_rejected(void **state)
{
    (void)state;
    dl_sizes_t s;
    assert_int_equal(dl_sizes_build(64, 8, 2, 0, &s), DL_ERR_USAGE); /* min > max */
    assert_int_equal(dl_sizes_build(8, 64, 1, 0, &s), DL_ERR_USAGE);
    assert_int_equal(dl_sizes_build(8, 64, 0.5, 0, &s), DL_ERR_USAGE);
    assert_int_equal(dl_sizes_build(8, 64, -2, 0, &s), DL_ERR_USAGE);
    assert_int_equal(dl_sizes_build(0, 64, 2, 0, &s), DL_ERR_USAGE);
    assert_int_equal(dl_sizes_build(1, 1 * GiB, 2, 1, &s), DL_ERR_USAGE); /* 1G steps of 1 B */
    assert_null(s.v);
    assert_int_equal(s.n, 0);
}

static void list_parse(void **state)
{
    (void)state;
    static const char *const names[] = {"alpha", "beta", "gamma"};
    static const char *const aliases[] = {"a", "alpha", NULL};
    const dl_choices_t ch = {.noun = "thing", .names = names, .n = 3, .aliases = aliases};
    uint32_t m;
    assert_int_equal(dl_choices_mask(&ch, "things", "alpha,gamma", &m), DL_OK);
    assert_int_equal(m, 5);
    assert_int_equal(dl_choices_mask(&ch, "things", "all", &m), DL_OK);
    assert_int_equal(m, 7);
    assert_int_equal(dl_choices_mask(&ch, "things", "a,beta", &m), DL_OK); /* an alias */
    assert_int_equal(m, 3);
    char text[64];
    dl_choices_mask_text(&ch, 5, text, sizeof(text));
    assert_string_equal(text, "alpha,gamma");
    dl_choices_text(&ch, text, sizeof(text));
    assert_string_equal(text, "alpha, beta or gamma");
    unit_capture_t c;
    unit_capture_begin(&c);
    dl_status_t st = dl_choices_mask(&ch, "things", "alpha,gamam", &m);
    const char *msg = unit_capture_end(&c);
    assert_int_equal(st, DL_ERR_USAGE);
    assert_non_null(strstr(msg, "--things: unknown thing 'gamam' (did you mean 'gamma'?)"));
    assert_int_equal(unit_lines(msg), 1);
    unit_capture_begin(&c);
    assert_int_equal(dl_choices_mask(&ch, "things", "", &m), DL_ERR_USAGE);
    assert_int_equal(dl_choices_mask(&ch, "things", ",,", &m), DL_ERR_USAGE);
    unit_capture_end(&c);
}

/* "Did you mean": a typo's one or two edits away, a swap of neighbours is
 * one; an unrelated word suggests nothing. */
static void suggest(void **state)
{
    (void)state;
    static const char *const words[] = {"sweep", "compare", "preflight", "profiles", NULL};
    assert_string_equal(dl_suggest("swep", words, 5), "sweep");
    assert_string_equal(dl_suggest("comapre", words, 5), "compare");
    assert_string_equal(dl_suggest("prefligth", words, 5), "preflight");
    assert_string_equal(dl_suggest("profile", words, 5), "profiles");
    assert_null(dl_suggest("xyz", words, 5));
    assert_null(dl_suggest("tune", words, 5));
    char buf[64] = "unknown command 'swep'";
    dl_suggest_append(buf, sizeof(buf), "swep", words, 5);
    assert_string_equal(buf, "unknown command 'swep' (did you mean 'sweep'?)");
}

/* One answer to "which rank am I" for every launcher, read before MPI. */
static void launcher_rank(void **state)
{
    (void)state;
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
                                       "PMI_RANK", "PMI_SIZE", "SLURM_PROCID",
                                       "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS",
                                       "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_STEP_NUM_NODES"};
    for (size_t i = 0; i < DL_ARRAY_SIZE(vars); i++)
        unsetenv(vars[i]);
    assert_int_equal(dl_launcher_rank(), -1); /* no launcher: a process of its own */
    assert_int_equal(dl_launcher_size(), 1);
    assert_true(dl_launcher_is_rank0());
    assert_true(dl_launcher_one_node());
    setenv("SLURM_PROCID", "3", 1); /* srun */
    setenv("SLURM_STEP_NUM_TASKS", "4", 1);
    setenv("SLURM_NTASKS", "8", 1);
    assert_int_equal(dl_launcher_rank(), 3);
    assert_int_equal(dl_launcher_size(), 4);
    assert_false(dl_launcher_is_rank0());
    assert_false(dl_launcher_one_node()); /* a step that does not say its nodes */
    setenv("SLURM_STEP_NUM_NODES", "1", 1);
    assert_true(dl_launcher_one_node());
    setenv("SLURM_STEP_NUM_NODES", "2", 1);
    assert_false(dl_launcher_one_node());
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1); /* mpirun: its local size decides */
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
    assert_true(dl_launcher_one_node());
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1); /* two nodes of two */
    assert_false(dl_launcher_one_node());
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("SLURM_STEP_NUM_NODES");
    setenv("PMIX_RANK", "0", 1); /* PMIx names the rank first */
    assert_true(dl_launcher_is_rank0());
    setenv("OMPI_COMM_WORLD_RANK", "2", 1); /* mpirun inside a Slurm batch step */
    setenv("OMPI_COMM_WORLD_SIZE", "6", 1);
    assert_int_equal(dl_launcher_rank(), 2);
    assert_int_equal(dl_launcher_size(), 6);
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMIX_RANK");
    setenv("PMI_RANK", "1", 1); /* MPICH's hydra */
    setenv("PMI_SIZE", "2", 1);
    assert_int_equal(dl_launcher_rank(), 1);
    assert_int_equal(dl_launcher_size(), 2);
    for (size_t i = 0; i < DL_ARRAY_SIZE(vars); i++)
        unsetenv(vars[i]);
}

static void stats_basic(void **state)
{
    (void)state;
    const double v[] = {5, 1, 4, 2, 3}; /* unsorted on purpose */
    dl_stats_t s;
    assert_int_equal(dl_stats_compute(v, 5, &s), DL_OK);
    assert_int_equal(s.n, 5);
    assert_near(s.mean, 3.0, 1e-12);
    assert_near(s.stdev, sqrt(2.5), 1e-12); /* sample stdev (n-1) */
    assert_near(s.min, 1, 0);
    assert_near(s.max, 5, 0);
    /* Linear interpolation between closest ranks: position p(n-1). */
    assert_near(s.p50, 3.0, 1e-12);
    assert_near(s.p95, 4.8, 1e-12);
    assert_near(s.p99, 4.96, 1e-12);
    /* t(0.975, df=4) = 2.776 */
    assert_near(s.ci95, 2.776 * sqrt(2.5) / sqrt(5.0), 1e-9);
    assert_near(v[0], 5, 0); /* the samples stay as they were */
}

static void stats_edges(void **state)
{
    (void)state;
    dl_stats_t s;
    const double one = 7.5;
    assert_int_equal(dl_stats_compute(&one, 1, &s), DL_OK);
    assert_near(s.mean, 7.5, 0);
    assert_near(s.p50, 7.5, 0);
    assert_near(s.p99, 7.5, 0);
    assert_near(s.stdev, 0, 0);
    assert_true(isinf(s.ci95)); /* one sample says nothing about spread */
    assert_int_not_equal(dl_stats_compute(&one, 0, &s), DL_OK);

    const double two[] = {10, 20};
    assert_int_equal(dl_stats_compute(two, 2, &s), DL_OK);
    assert_near(s.p50, 15, 1e-12);
    assert_near(s.p95, 19.5, 1e-12);
    assert_near(s.ci95, 12.706 * sqrt(50.0) / sqrt(2.0), 1e-9);

    /* Many identical samples: no spread, no rounding noise (Welford). */
    double *same = malloc(100000 * sizeof(*same));
    for (int i = 0; i < 100000; i++)
        same[i] = 1e-6;
    assert_int_equal(dl_stats_compute(same, 100000, &s), DL_OK);
    assert_near(s.mean, 1e-6, 1e-18);
    assert_true(s.stdev < 1e-18);
    free(same);

    /* Large n: the normal quantile. 0..999, stdev sqrt(n(n+1)/12). */
    double *seq = malloc(1000 * sizeof(*seq));
    for (int i = 0; i < 1000; i++)
        seq[i] = i;
    assert_int_equal(dl_stats_compute(seq, 1000, &s), DL_OK);
    assert_near(s.mean, 499.5, 1e-9);
    assert_near(s.stdev, sqrt(1000.0 * 1001 / 12), 1e-9);
    assert_near(s.ci95, dl_t95(999) * s.stdev / sqrt(1000.0), 1e-9);
    assert_near(s.p99, 989.01, 1e-9);
    free(seq);
}

static void t_table(void **state)
{
    (void)state;
    assert_true(isinf(dl_t95(0)));
    assert_near(dl_t95(1), 12.706, 1e-9);
    assert_near(dl_t95(2), 4.303, 1e-9);
    assert_near(dl_t95(10), 2.228, 1e-9);
    assert_near(dl_t95(30), 2.042, 1e-9);
    assert_near(dl_t95(60), 2.000, 1e-9);
    /* Past the table: within 1e-4 of the true quantiles, no jump at 120. */
    assert_near(dl_t95(120), 1.980, 1e-3);
    assert_near(dl_t95(200), 1.9719, 1e-4);
    assert_near(dl_t95(1000), 1.9623, 1e-4);
    assert_near(dl_t95(100000000), 1.960, 1e-4);
    /* Never increases with more samples (the CI can only narrow for it). */
    for (size_t df = 1; df < 2000; df++)
        assert_true(dl_t95(df + 1) <= dl_t95(df));
}

static void median_mad(void **state)
{
    (void)state;
    const double odd[] = {3, 100, 1, 4, 2};
    assert_near(dl_median(odd, 5), 3, 0);
    /* |v - 3| = 0 97 2 1 1 -> median 1, scaled to sigma */
    assert_near(dl_mad(odd, 5, 3), 1.4826, 1e-12);
    const double even[] = {4, 1, 3, 2};
    assert_near(dl_median(even, 4), 2.5, 0);
    assert_near(dl_mad(even, 4, 2.5), 1.4826, 1e-12);
    assert_true(isnan(dl_median(odd, 0)));
    assert_near(odd[1], 100, 0); /* input untouched */
}

/* ---- the option table ---- */

typedef struct {
    int flag, on;
    const char *name;
    long count;
    double ratio;
    uint64_t bytes;
} topts_t;

static const char *positive_long(const void *f)
{
    return *(const long *)f > 0 ? NULL : "must be > 0";
}

#define O(f) offsetof(topts_t, f)
static const dl_opt_t topts[] = {
    {"flag", 'q', DL_OPT_FLAG, "0", NULL, "a flag", O(flag), NULL},
    {"on", 0, DL_OPT_FLAG, "1", NULL, "on by default", O(on), NULL},
    {"name", 'n', DL_OPT_STR, "dflt", "NAME", "a name", O(name), NULL},
    {"count", 'c', DL_OPT_INT, "3", "N", "a count", O(count), positive_long},
    {"ratio", 0, DL_OPT_DOUBLE, "0.5", "R", "a ratio", O(ratio), NULL},
    {"bytes", 'b', DL_OPT_SIZE, "8", "SIZE", "a size", O(bytes), NULL},
};
#undef O

/* Parses argv (NULL-terminated); returns the status and the stderr text. */
static dl_status_t parse(topts_t *t, const char **args, const char **msg, int *help)
{
    char *argv[16];
    int argc = 0;
    while (args[argc])
        argv[argc] = (char *)args[argc], argc++;
    memset(t, 0, sizeof(*t));
    unit_capture_t c;
    unit_capture_begin(&c);
    dl_status_t st = dl_opts_parse(topts, DL_ARRAY_SIZE(topts), t, argc, argv, NULL, 0, NULL, help);
    *msg = unit_capture_end(&c);
    return st;
}

static void opts_values(void **state)
{
    (void)state;
    topts_t t;
    const char *msg;
    int help;
    const char *none[] = {NULL};
    assert_int_equal(parse(&t, none, &msg, &help), DL_OK);
    assert_int_equal(t.flag, 0);
    assert_int_equal(t.on, 1);
    assert_string_equal(t.name, "dflt");
    assert_int_equal(t.count, 3);
    assert_near(t.ratio, 0.5, 0);
    assert_int_equal(t.bytes, 8);
    assert_int_equal(help, 0);

    const char *all[] = {"-q", "--no-on", "-n", "x", "--count=7", "--ratio", "0.25", "-b64K", NULL};
    assert_int_equal(parse(&t, all, &msg, &help), DL_OK);
    assert_string_equal(msg, "");
    assert_int_equal(t.flag, 1);
    assert_int_equal(t.on, 0);
    assert_string_equal(t.name, "x");
    assert_int_equal(t.count, 7);
    assert_near(t.ratio, 0.25, 0);
    assert_int_equal(t.bytes, 64 * KiB);

    const char *h[] = {"-n", "x", "--help", "--bogus", NULL};
    assert_int_equal(parse(&t, h, &msg, &help), DL_OK);
    assert_int_equal(help, 1);
}

/* Each mistake: DL_ERR_USAGE and one stderr line containing `want`. */
static void expect_usage(const char **args, const char *want)
{
    topts_t t;
    const char *msg;
    int help;
    dl_status_t st = parse(&t, args, &msg, &help);
    if (st != DL_ERR_USAGE || !strstr(msg, want) || unit_lines(msg) != 1) {
        print_error("%s ...: status %s, stderr '%s', want usage error with '%s'\n", args[0],
                    dl_status_str(st), msg, want);
        fail();
    }
}

static void opts_errors(void **state)
{
    (void)state;
    expect_usage((const char *[]){"--nosuch", NULL}, "unknown option '--nosuch'");
    expect_usage((const char *[]){"-z", NULL}, "unknown option '-z'");
    expect_usage((const char *[]){"--no-name", NULL}, "unknown option '--no-name'");
    expect_usage((const char *[]){"-n", NULL}, "option --name needs a value (NAME)");
    expect_usage((const char *[]){"-q", "--count", NULL}, "option --count needs a value (N)");
    expect_usage((const char *[]){"-c", "12x", NULL}, "option --count: '12x' is not a valid N");
    expect_usage((const char *[]){"-c", "", NULL}, "is not a valid N");
    expect_usage((const char *[]){"--ratio", "abc", NULL}, "option --ratio: 'abc' is not a valid R");
    expect_usage((const char *[]){"--ratio", "inf", NULL}, "is not a valid R");
    expect_usage((const char *[]){"-b", "12Q", NULL}, "option --bytes: '12Q' is not a valid SIZE");
    expect_usage((const char *[]){"-b", "0", NULL}, "is not a valid SIZE");
    expect_usage((const char *[]){"-c", "0", NULL}, "option --count: must be > 0");
    expect_usage((const char *[]){"-c", "-4", NULL}, "option --count: '-4' is out of range (0..2147483647)");
    expect_usage((const char *[]){"-c", "2147483648", NULL}, "is out of range (0..2147483647)");
    expect_usage((const char *[]){"-c", "99999999999999999999", NULL}, "is out of range");
    expect_usage((const char *[]){"stray", NULL}, "unexpected argument 'stray'");
}

static void opts_positional(void **state)
{
    (void)state;
    topts_t t;
    int help, npos;
    char *pos[2];
    char *argv[] = {"a", "-q", "b", "c"};
    unit_capture_t c;
    unit_capture_begin(&c);
    dl_status_t st = dl_opts_parse(topts, DL_ARRAY_SIZE(topts), &t, 4, argv, pos, 2, &npos, &help);
    const char *msg = unit_capture_end(&c);
    assert_int_equal(st, DL_ERR_USAGE); /* three positionals, room for two */
    assert_non_null(strstr(msg, "unexpected argument 'c'"));
    st = dl_opts_parse(topts, DL_ARRAY_SIZE(topts), &t, 3, argv, pos, 2, &npos, &help);
    assert_int_equal(st, DL_OK);
    assert_int_equal(npos, 2);
    assert_string_equal(pos[0], "a");
    assert_string_equal(pos[1], "b");
    assert_int_equal(t.flag, 1);
}

/* A line composed with another command's table (tune over sweep's): rows
 * the line has are its own; the other's rest are refused by name with why,
 * and never echoed as this run's options. */
typedef struct {
    uint64_t maxbytes;
    int flag;
} other_t;
static const dl_opt_t other_rows[] = {
    {"maxbytes", 'e', DL_OPT_SIZE, "1M", "SIZE", "largest", offsetof(other_t, maxbytes), NULL},
    {"flag", 'q', DL_OPT_FLAG, "0", NULL, "the other's flag", offsetof(other_t, flag), NULL},
};

static void opts_refusing(void **state)
{
    (void)state;
    const dl_opt_table_t other = {"other", other_rows, DL_ARRAY_SIZE(other_rows), sizeof(other_t), 0};
    dl_optset_t s;
    assert_int_equal(dl_backend_optset_refusing(&s, topts, DL_ARRAY_SIZE(topts), sizeof(topts_t),
                                                &other, "the other's"), DL_OK);
    const dl_opt_t *e = dl_opt_find(s.opts, s.n, "-e"), *q = dl_opt_find(s.opts, s.n, "-q");
    assert_non_null(e);
    assert_true(e->flags & DL_OPT_FIXED);
    assert_false(q->flags & DL_OPT_FIXED); /* the line's own flag, not the other's */
    char *argv[] = {"-e1M"}, *ok[] = {"-q", "--count", "4"};
    int help = 0;
    unit_capture_t c;
    unit_capture_begin(&c);
    dl_status_t st = dl_opts_parse(s.opts, s.n, s.target, 1, argv, NULL, 0, NULL, &help);
    const char *msg = unit_capture_end(&c);
    assert_int_equal(st, DL_ERR_USAGE);
    assert_non_null(strstr(msg, "--maxbytes is the other's"));
    assert_int_equal(dl_opts_parse(s.opts, s.n, s.target, 3, ok, NULL, 0, NULL, &help), DL_OK);
    assert_int_equal(((topts_t *)s.target)->count, 4);
    cJSON *echo = cJSON_CreateObject();
    dl_opts_echo(s.opts, s.n, s.target, echo);
    assert_non_null(cJSON_GetObjectItem(echo, "count"));
    assert_null(cJSON_GetObjectItem(echo, "maxbytes"));
    cJSON_Delete(echo);
    dl_optset_free(&s);
}

static void opts_help_text(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    dl_opts_help(f, "usage: test", topts, DL_ARRAY_SIZE(topts));
    char buf[4096];
    rewind(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    /* Every option appears with its default: help and parsing share one table. */
    assert_non_null(strstr(buf, "usage: test"));
    assert_non_null(strstr(buf, "-b, --bytes SIZE"));
    assert_non_null(strstr(buf, "[8]"));
    assert_non_null(strstr(buf, "--no-on"));
    assert_non_null(strstr(buf, "--ratio R"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(size_parse_accepts), cmocka_unit_test(size_parse_rejects),
        cmocka_unit_test(size_format),        cmocka_unit_test(sizes_by_factor),
        cmocka_unit_test(sizes_by_step),      cmocka_unit_test(sizes_rejected),
        cmocka_unit_test(list_parse),         cmocka_unit_test(suggest), cmocka_unit_test(launcher_rank),         cmocka_unit_test(stats_basic),
        cmocka_unit_test(stats_edges),        cmocka_unit_test(t_table),
        cmocka_unit_test(median_mad),         cmocka_unit_test(opts_values),
        cmocka_unit_test(opts_errors),        cmocka_unit_test(opts_positional),
        cmocka_unit_test(opts_refusing),
        cmocka_unit_test(opts_help_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
