/* The floor dlcomm's MPI path is compared with: a bare MPI_Allreduce loop.
 * float32 sum, out of place, warm-up calls, then N back-to-back calls timed
 * with MPI_Wtime around the whole loop (nothing inside it). Prints the max
 * over ranks of total/N, the figure dlcomm's avg_us stands for.
 *
 *   mpirun -np 4 bench_bare_allreduce BYTES ITERS [WARMUP]
 *
 * A benchmark, not a test: scripts/bench-mpi.sh runs it against dlcomm. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np N %s BYTES ITERS [WARMUP]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    long bytes = atol(argv[1]), iters = atol(argv[2]), warm = argc > 3 ? atol(argv[3]) : 5;
    int count = (int)(bytes / (long)sizeof(float));
    if (count < 1)
        count = 1;
    float *send = malloc((size_t)count * sizeof(float)), *recv = malloc((size_t)count * sizeof(float));
    for (int i = 0; i < count; i++)
        send[i] = (float)((i + 3 * rank) & 1);
    for (long i = 0; i < warm; i++)
        MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double per = (MPI_Wtime() - t0) / (double)iters, worst;
    MPI_Reduce(&per, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("bytes %ld iters %ld avg_us %.3f\n", (long)count * (long)sizeof(float), iters,
               worst * 1e6);
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
