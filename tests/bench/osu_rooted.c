/* The reference dlcomm's rooted-collective latency is compared with: the
 * method of OSU's latency benchmarks (osu_bcast and its siblings), written
 * for dlcomm's sizes. float32, root 0; per rank, each call is timed alone
 * (MPI_Wtime just before and just after), then an untimed MPI_Barrier; a
 * rank's latency is the sum of its calls' times / ITERS. Prints the mean,
 * min and max of the ranks' latencies, as OSU's Avg/Min/Max Latency.
 * gather and scatter: BYTES is the whole (gathered / scattered) buffer,
 * BYTES / 4 / np floats per rank, at least one, as in dlcomm.
 *
 *   mpirun -np 2 bench_osu_rooted bcast|reduce|gather|scatter BYTES ITERS [WARMUP]
 *
 * A benchmark, not a test: scripts/bench-osu.sh runs it against dlcomm. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int call(const char *coll, float *send, float *recv, int count, int per)
{
    if (strcmp(coll, "bcast") == 0)
        return MPI_Bcast(recv, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
    if (strcmp(coll, "reduce") == 0)
        return MPI_Reduce(send, recv, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (strcmp(coll, "gather") == 0)
        return MPI_Gather(send, per, MPI_FLOAT, recv, per, MPI_FLOAT, 0, MPI_COMM_WORLD);
    return MPI_Scatter(send, per, MPI_FLOAT, recv, per, MPI_FLOAT, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *coll = argc > 1 ? argv[1] : "";
    if (argc < 4 || (strcmp(coll, "bcast") && strcmp(coll, "reduce") && strcmp(coll, "gather") &&
                     strcmp(coll, "scatter"))) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np N %s bcast|reduce|gather|scatter BYTES ITERS [WARMUP]\n",
                    argv[0]);
        MPI_Finalize();
        return 2;
    }
    long bytes = atol(argv[2]), iters = atol(argv[3]), warm = argc > 4 ? atol(argv[4]) : 5;
    int count = (int)(bytes / (long)sizeof(float)), per = count / np;
    if (count < 1)
        count = 1;
    if (per < 1)
        per = 1;
    size_t n = (size_t)(count > per * np ? count : per * np);
    float *send = calloc(n, sizeof(float)), *recv = calloc(n, sizeof(float));
    for (long i = 0; i < warm; i++) {
        call(coll, send, recv, count, per);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double sum = 0;
    for (long i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        call(coll, send, recv, count, per);
        sum += MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double lat = sum / (double)iters * 1e6, lo, hi, tot;
    MPI_Reduce(&lat, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&lat, &hi, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&lat, &tot, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("osu %s bytes %ld ranks %d iters %ld avg_us %.4f min_us %.4f max_us %.4f\n", coll,
               bytes, np, iters, tot / np, lo, hi);
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
