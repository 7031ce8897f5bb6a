/* Where a small call's time goes on one GPU, beside what dlcomm reports:
 * all-reduce float32 sum, out of place, 8 B .. 1 KiB, timed four ways.
 *   loop      nccl-tests' way: one event pair around ITERS back-to-back calls,
 *             a blocking communicator; time = span / ITERS
 *   loop-nb   the same on a non-blocking communicator (what dlcomm uses, so
 *             its watchdog can abort)
 *   per-call  an event after every call (dlcomm's way), non-blocking
 *   readback  host microseconds per cudaEventElapsedTime, read after a batch
 * First, what starting costs: the CUDA driver, the context, a communicator.
 * Each is repeated REPS times; the median of the repetitions is printed.
 * A benchmark, not a test: it asserts nothing. Exits 77 without a GPU.
 * Usage: nccl_launch_bench [ITERS [REPS]] */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAXEV 4097

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static ncclComm_t open_comm(int blocking)
{
    ncclUniqueId id;
    ncclComm_t comm = NULL;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = blocking;
    if (ncclGetUniqueId(&id) != ncclSuccess)
        return NULL;
    ncclResult_t r = ncclCommInitRankConfig(&comm, 1, id, 0, &cfg);
    while (r == ncclInProgress)
        ncclCommGetAsyncError(comm, &r);
    return r == ncclSuccess ? comm : NULL;
}

/* One call; a non-blocking communicator may answer in progress. */
static int call(ncclComm_t comm, void *s, void *d, size_t n, cudaStream_t st)
{
    ncclResult_t r = ncclAllReduce(s, d, n, ncclFloat32, ncclSum, comm, st);
    while (r == ncclInProgress)
        ncclCommGetAsyncError(comm, &r);
    return r == ncclSuccess ? 0 : -1;
}

/* Microseconds per call of one repetition, or per readback. */
static double one_rep(ncclComm_t comm, int per_call, int readback, void *s, void *d, size_t n,
                      int iters, cudaStream_t st, cudaEvent_t *ev)
{
    for (int i = 0; i < 5; i++)
        call(comm, s, d, n, st);
    cudaStreamSynchronize(st);
    cudaEventRecord(ev[0], st);
    for (int i = 0; i < iters; i++) {
        call(comm, s, d, n, st);
        if (per_call)
            cudaEventRecord(ev[i + 1], st);
    }
    if (!per_call)
        cudaEventRecord(ev[iters], st);
    cudaStreamSynchronize(st);
    float ms = 0;
    if (readback) {
        double t0 = now_us();
        for (int i = 0; i < iters; i++)
            cudaEventElapsedTime(&ms, ev[i], ev[i + 1]);
        return (now_us() - t0) / iters;
    }
    cudaEventElapsedTime(&ms, ev[0], ev[iters]);
    return ms * 1e3 / iters;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20, reps = argc > 2 ? atoi(argv[2]) : 200;
    int ndev = 0;
    double t0 = now_us();
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP: no CUDA GPU is visible\n");
        return 77;
    }
    if (iters < 1 || iters >= MAXEV || reps < 1) {
        fprintf(stderr, "nccl_launch_bench: ITERS must be 1..%d and REPS >= 1\n", MAXEV - 1);
        return 2;
    }
    double t1 = now_us();
    cudaSetDevice(0);
    cudaFree(NULL); /* the context */
    double t2 = now_us();
    cudaStream_t st;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    static cudaEvent_t ev[MAXEV];
    for (int i = 0; i < MAXEV; i++)
        cudaEventCreate(&ev[i]);
    void *s = NULL, *d = NULL;
    cudaMalloc(&s, 1024);
    cudaMalloc(&d, 1024);
    double t3 = now_us();
    ncclComm_t blocking = open_comm(1);
    double t4 = now_us();
    ncclComm_t nonblocking = open_comm(0);
    if (!blocking || !nonblocking) {
        fprintf(stderr, "nccl_launch_bench: cannot open the communicators\n");
        return 1;
    }
    int v = 0;
    ncclGetVersion(&v);
    printf("NCCL %d, %d iterations x %d repetitions, median of repetitions, us per call\n", v,
           iters, reps);
    printf("start: CUDA driver (cudaGetDeviceCount) %.3f s, context %.3f s, communicator %.3f s\n",
           (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t4 - t3) / 1e6);
    printf("%8s %9s %9s %9s %9s\n", "bytes", "loop", "loop-nb", "per-call", "readback");
    double *r = malloc((size_t)reps * sizeof(*r));
    for (size_t bytes = 8; bytes <= 1024; bytes *= 2) {
        size_t n = bytes / 4 ? bytes / 4 : 1;
        double col[4];
        for (int mode = 0; mode < 4; mode++) {
            ncclComm_t c = mode == 0 ? blocking : nonblocking;
            for (int k = 0; k < reps; k++)
                r[k] = one_rep(c, mode >= 2, mode == 3, s, d, n, iters, st, ev);
            col[mode] = median(r, reps);
        }
        printf("%8zu %9.2f %9.2f %9.2f %9.3f\n", bytes, col[0], col[1], col[2], col[3]);
    }
    free(r);
    ncclCommDestroy(blocking);
    ncclCommDestroy(nonblocking);
    return 0;
}
