/* One GPU per rank: whether the ranks on each host have a GPU each, asked
 * of every host before any worker starts (src/sys/gpus.c). */
#ifndef DL_GPUS_H
#define DL_GPUS_H

#include <mpi.h>
#include <stddef.h>

#include "../util/util.h"

/* The decision, alone: `ranks` on `host` would use `gpus` distinct GPUs.
 * NULL when each rank has its own (or, cpu_ok, the host has none: CPU
 * ranks), else buf with the one line, ending in `instead` (what else the
 * user can do, e.g. "or --backend mpi"). */
const char *dl_gpus_verdict(int ranks, int gpus, int cpu_ok, const char *host,
                            const char *instead, char *buf, size_t len);
/* Distinct non-empty ids among n (each DL_GPU_ID_LEN chars): the GPUs the
 * ranks of one host would use. */
#define DL_GPU_ID_LEN 32
int dl_gpus_distinct(const char *ids, int n);
/* Collective over comm: every rank learns whether any host (NCCL's idea:
 * dl_sys_hosts) has more ranks than GPUs; the first such host's first rank
 * prints the line. DL_ERR_USAGE then (exit 2), before anything is written.
 * per_gpu (optional): the most ranks of one machine that use one GPU (1:
 * a GPU each; more: ranks that are hosts of their own share a GPU). */
dl_status_t dl_gpus_check(MPI_Comm comm, int cpu_ok, const char *instead, int *per_gpu);
/* Collective over comm: on rank 0 a cJSON array of each rank's GPU (the PCI
 * bus id it would use, "" none), NULL elsewhere. For the run's record. */
void *dl_gpus_rank_map(MPI_Comm comm);

#endif
