/* One GPU per rank of a host, checked before anything starts. NCCL refuses
 * two ranks on one GPU of one host ("Duplicate GPU detected") only inside
 * each worker's communicator set-up, after files are written; here each
 * rank names the GPU it would use (the nccl backend's rule: local rank on
 * its machine modulo the devices it sees), the ranks of a host (NCCL's
 * idea of one: dl_sys_hosts) compare names, and all ranks agree before any
 * of them returns. Ids are PCI bus ids, so ranks that each see one
 * different GPU (CUDA_VISIBLE_DEVICES per rank) count as distinct GPUs.
 * Ranks that are hosts of their own (NCCL_HOSTID) may share a GPU: NCCL
 * then joins them through its network transport, and the run says so. */
#include "gpus.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/util.h"
#include "sys.h"
#include "watchdog.h"

#ifdef DL_HAVE_NCCL
#include <cuda_runtime.h>
#endif

const char *dl_gpus_verdict(int ranks, int gpus, int cpu_ok, const char *host,
                            const char *instead, char *buf, size_t len)
{
    if (ranks <= gpus || (gpus == 0 && cpu_ok))
        return NULL;
    if (gpus == 0)
        snprintf(buf, len, "%d rank%s on %s see no GPU: NCCL needs one GPU per rank; %s", ranks,
                 ranks == 1 ? "" : "s", host, instead);
    else
        snprintf(buf, len,
                 "%d ranks on %s share %d GPU%s: NCCL needs one GPU per rank; run -np 1 per GPU "
                 "on this host (mpirun -np N --map-by ppr:%d:node), %s",
                 ranks, host, gpus, gpus == 1 ? "" : "s", gpus, instead);
    return buf;
}

int dl_gpus_distinct(const char *ids, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++) {
        const char *a = ids + (size_t)i * DL_GPU_ID_LEN;
        int seen = !a[0];
        for (int j = 0; j < i && !seen; j++)
            seen = strncmp(a, ids + (size_t)j * DL_GPU_ID_LEN, DL_GPU_ID_LEN) == 0;
        d += !seen;
    }
    return d;
}

/* The bus id of the GPU this rank would use; "" when it sees none. Quiet
 * on a host without a GPU or a driver. */
static void my_gpu(int local_rank, char *id)
{
    memset(id, 0, DL_GPU_ID_LEN);
#ifdef DL_HAVE_NCCL
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
        cudaGetLastError();
        return;
    }
    if (cudaDeviceGetPCIBusId(id, DL_GPU_ID_LEN - 1, local_rank % n) != cudaSuccess)
        snprintf(id, DL_GPU_ID_LEN, "device %d", local_rank % n);
#else
    (void)local_rank;
#endif
}

/* Over each of comm's hosts (NCCL's idea of one): the verdict of its ranks'
 * GPUs, said by the first offending host's first rank; every rank learns. */
static dl_status_t check_hosts(MPI_Comm comm, const dl_hosts_t *hosts, const char *mine,
                               int cpu_ok, const char *instead)
{
    int rank, hrank = 0, hsize = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm host;
    MPI_Comm_split(comm, hosts->host_of[rank], rank, &host);
    MPI_Comm_rank(host, &hrank);
    MPI_Comm_size(host, &hsize);
    char *ids = calloc((size_t)hsize, DL_GPU_ID_LEN), line[512];
    if (!ids)
        dl_watchdog_abort("out of memory (the host's GPU list)");
    MPI_Allgather(mine, DL_GPU_ID_LEN, MPI_CHAR, ids, DL_GPU_ID_LEN, MPI_CHAR, host);
    MPI_Comm_free(&host);
    const char *why = dl_gpus_verdict(hsize, dl_gpus_distinct(ids, hsize), cpu_ok,
                                      hosts->names[hosts->host_of[rank]], instead, line,
                                      sizeof(line));
    free(ids);
    int speaker = why && hrank == 0 ? rank : INT_MAX, first = INT_MAX;
    MPI_Allreduce(&speaker, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX)
        return DL_OK;
    if (first == rank)
        dl_err("%s", line);
    return DL_ERR_USAGE;
}

/* The most ranks of one machine (shared memory) that use one GPU. */
static int most_on_one_gpu(MPI_Comm comm, const char *mine)
{
    int rank, lsize = 1, most = 1, same = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &lsize);
    char *ids = calloc((size_t)lsize, DL_GPU_ID_LEN);
    if (!ids)
        dl_watchdog_abort("out of memory (the machine's GPU list)");
    MPI_Allgather(mine, DL_GPU_ID_LEN, MPI_CHAR, ids, DL_GPU_ID_LEN, MPI_CHAR, node);
    for (int i = 0; mine[0] && i < lsize; i++)
        same += strncmp(ids + (size_t)i * DL_GPU_ID_LEN, mine, DL_GPU_ID_LEN) == 0;
    free(ids);
    MPI_Comm_free(&node);
    MPI_Allreduce(&same, &most, 1, MPI_INT, MPI_MAX, comm);
    return most;
}

dl_status_t dl_gpus_check(MPI_Comm comm, int cpu_ok, const char *instead, int *per_gpu)
{
    int local_rank = 0, local_size = 1;
    dl_sys_local_rank(comm, &local_rank, &local_size); /* the device: the backend's rule */
    char mine[DL_GPU_ID_LEN];
    my_gpu(local_rank, mine);
    dl_hosts_t hosts;
    dl_status_t st = dl_sys_hosts(comm, &hosts);
    if (st != DL_OK)
        return st;
    st = check_hosts(comm, &hosts, mine, cpu_ok, instead);
    dl_sys_hosts_free(&hosts);
    if (per_gpu)
        *per_gpu = st == DL_OK ? most_on_one_gpu(comm, mine) : 0;
    return st;
}

void *dl_gpus_rank_map(MPI_Comm comm)
{
    int rank, nranks, local_rank = 0, local_size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    dl_sys_local_rank(comm, &local_rank, &local_size);
    char mine[DL_GPU_ID_LEN], *all = rank == 0 ? calloc((size_t)nranks, DL_GPU_ID_LEN) : NULL;
    my_gpu(local_rank, mine);
    MPI_Gather(mine, DL_GPU_ID_LEN, MPI_CHAR, all, DL_GPU_ID_LEN, MPI_CHAR, 0, comm);
    if (rank != 0 || !all) {
        free(all);
        return NULL;
    }
    cJSON *a = cJSON_CreateArray();
    for (int r = 0; r < nranks; r++) {
        char id[DL_GPU_ID_LEN + 1];
        snprintf(id, sizeof(id), "%.*s", DL_GPU_ID_LEN, all + (size_t)r * DL_GPU_ID_LEN);
        cJSON_AddItemToArray(a, cJSON_CreateString(id));
    }
    free(all);
    return a;
}
