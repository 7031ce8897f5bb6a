/* preflight's arithmetic: host layout, pair schedules, outliers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "preflight/preflight.h"

/* Every round is a set of disjoint pairs; returns how often each pair ran. */
static int *pair_counts(int n, int rounds, const int *partner)
{
    int *seen = calloc((size_t)n * n, sizeof(int));
    for (int r = 0; r < rounds; r++)
        for (int h = 0; h < n; h++) {
            int q = partner[r * n + h];
            if (q < 0)
                continue;
            assert_true(q >= 0 && q < n && q != h);
            assert_int_equal(partner[r * n + q], h); /* symmetric: disjoint pairs */
            if (h < q)
                seen[h * n + q]++;
        }
    return seen;
}

static void all_pairs_once(void **state)
{
    (void)state;
    for (int n = 2; n <= 17; n++) {
        int *p, rounds = dl_pf_pair_rounds(n, DL_PF_PAIRS_ALL, &p);
        assert_int_equal(rounds, n % 2 ? n : n - 1);
        int *seen = pair_counts(n, rounds, p);
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++)
                assert_int_equal(seen[a * n + b], 1);
        free(seen);
        free(p);
    }
}

static void ring_neighbours(void **state)
{
    (void)state;
    for (int n = 2; n <= 33; n++) {
        int *p, rounds = dl_pf_pair_rounds(n, DL_PF_PAIRS_RING, &p);
        assert_true(rounds >= 1 && rounds <= 3);
        int *seen = pair_counts(n, rounds, p), total = 0;
        for (int h = 0; h < n; h++) {
            int a = h, b = (h + 1) % n;
            if (a > b) { int t = a; a = b; b = t; }
            assert_int_equal(seen[a * n + b], 1);
        }
        for (int i = 0; i < n * n; i++)
            total += seen[i];
        assert_int_equal(total, n == 2 ? 1 : n);
        free(seen);
        free(p);
    }
}

static void auto_switches_to_ring(void **state)
{
    (void)state;
    assert_int_equal(dl_pf_pairs_resolve(DL_PF_PAIRS_AUTO, DL_PF_ALL_PAIRS_MAX_HOSTS),
                     DL_PF_PAIRS_ALL);
    assert_int_equal(dl_pf_pairs_resolve(DL_PF_PAIRS_AUTO, DL_PF_ALL_PAIRS_MAX_HOSTS + 1),
                     DL_PF_PAIRS_RING);
    int *p;
    assert_int_equal(dl_pf_pair_rounds(1, DL_PF_PAIRS_ALL, &p), 0);
}

static void outliers(void **state)
{
    (void)state;
    int low[8];
    double med;
    /* a healthy spread of 4x (noisy hosts) names nobody */
    double noisy[] = {0.11, 0.2, 0.42, 0.42};
    assert_int_equal(dl_pf_low_outliers(noisy, 4, 0.9, 2.5, low, &med), 0);
    /* one host at a twentieth of the others is named */
    double one[] = {0.12, 0.036, 0.002, 0.117};
    assert_int_equal(dl_pf_low_outliers(one, 4, 0.9, 2.5, low, &med), 1);
    assert_true(low[2] && !low[0] && !low[1] && !low[3]);
    /* unmeasured entries (< 0) are ignored; two figures decide nothing */
    double two[] = {-1, 1.0, 0.01, -1};
    assert_int_equal(dl_pf_low_outliers(two, 4, 0.9, 2.5, low, &med), 0);
    /* a tight group: a 18% dip is within the noise floor, a 40% one is not */
    double tight[] = {1.0, 1.01, 0.99, 0.82};
    assert_int_equal(dl_pf_low_outliers(tight, 4, 0.9, 2.5, low, &med), 0);
    tight[3] = 0.6;
    assert_int_equal(dl_pf_low_outliers(tight, 4, 0.9, 2.5, low, &med), 1);
    assert_true(low[3]);
    /* a high outlier is not a fault */
    double high[] = {1, 1.05, 0.98, 9};
    assert_int_equal(dl_pf_low_outliers(high, 4, 0.9, 2.5, low, &med), 0);
}

static void layout_groups_hosts(void **state)
{
    (void)state;
    char names[5][256] = {"b", "a", "b", "c", "a"};
    dl_pf_layout_t l;
    assert_int_equal(dl_pf_layout_from_names(names[0], 5, &l), DL_OK);
    assert_int_equal(l.nhosts, 3);
    assert_string_equal(l.names[0], "b");
    int host[] = {0, 1, 0, 2, 1}, local[] = {0, 0, 1, 0, 1};
    for (int r = 0; r < 5; r++) {
        assert_int_equal(l.host_of[r], host[r]);
        assert_int_equal(l.local_of[r], local[r]);
    }
    assert_int_equal(l.max_local, 2);
    dl_pf_layout_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_pairs_once),
        cmocka_unit_test(ring_neighbours),
        cmocka_unit_test(auto_switches_to_ring),
        cmocka_unit_test(outliers),
        cmocka_unit_test(layout_groups_hosts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
