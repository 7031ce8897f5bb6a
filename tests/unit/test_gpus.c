/* The one-GPU-per-rank decision (src/sys/gpus.c): the line users see, and
 * when it is said. The collective check itself runs on the GPU host
 * (scripts/gpu-check-ranks.sh): here no GPU exists to count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sys/gpus.h"

static void eight_ranks_one_gpu(void **state)
{
    (void)state;
    char buf[512];
    const char *l = dl_gpus_verdict(8, 1, 0, "gpu7", "or --backend mpi", buf, sizeof(buf));
    assert_non_null(l);
    assert_string_equal(l, "8 ranks on gpu7 share 1 GPU: NCCL needs one GPU per rank; run -np 1 "
                           "per GPU on this host (mpirun -np N --map-by ppr:1:node), or --backend mpi");
}

static void plural_and_fit(void **state)
{
    (void)state;
    char buf[512];
    assert_non_null(strstr(dl_gpus_verdict(8, 4, 0, "h", "x", buf, sizeof(buf)),
                           "share 4 GPUs:"));
    assert_non_null(strstr(buf, "ppr:4:node"));
    assert_null(dl_gpus_verdict(8, 8, 0, "h", "x", buf, sizeof(buf)));
    assert_null(dl_gpus_verdict(4, 8, 0, "h", "x", buf, sizeof(buf))); /* fewer ranks: fine */
    assert_null(dl_gpus_verdict(1, 1, 0, "h", "x", buf, sizeof(buf)));
}

static void no_gpu(void **state)
{
    (void)state;
    char buf[512];
    /* CPU ranks on a host without GPUs are fine where the caller allows it
     * (preflight); a device backend says no. */
    assert_null(dl_gpus_verdict(8, 0, 1, "h", "x", buf, sizeof(buf)));
    assert_non_null(strstr(dl_gpus_verdict(2, 0, 0, "h", "x", buf, sizeof(buf)), "2 ranks on h see no GPU"));
    assert_non_null(dl_gpus_verdict(8, 1, 1, "h", "x", buf, sizeof(buf))); /* a GPU host still counts */
}

static void distinct_ids(void **state)
{
    (void)state;
    char ids[4][DL_GPU_ID_LEN] = {"0000:17:00.0", "0000:17:00.0", "0000:3d:00.0", ""};
    assert_int_equal(dl_gpus_distinct(&ids[0][0], 4), 2); /* "" sees no GPU */
    assert_int_equal(dl_gpus_distinct(&ids[0][0], 1), 1);
    assert_int_equal(dl_gpus_distinct(&ids[3][0], 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eight_ranks_one_gpu),
        cmocka_unit_test(plural_and_fit),
        cmocka_unit_test(no_gpu),
        cmocka_unit_test(distinct_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
