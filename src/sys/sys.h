/*
 * sys: what dlcomm knows about the hosts it runs on: this host's facts
 * (name, CPU, kernel, OS), the MPI library, and, across the job, which
 * ranks share a host. The fingerprint in run.json comes from here.
 */
#ifndef DL_SYS_H
#define DL_SYS_H

#include <cjson/cJSON.h>
#include <mpi.h>

typedef struct {
    char host[256];
    char cpu[128];
    int cores;
    char kernel[128];
    char os[128];
} dl_host_info_t;

void dl_sys_host_info(dl_host_info_t *h);
/* "Open MPI v4.1.4, ..." */
void dl_sys_mpi_version(char *buf, size_t len);
/* Rank and size among the ranks on this host (MPI_COMM_TYPE_SHARED). */
int dl_sys_local_rank(MPI_Comm comm, int *local_rank, int *local_size);
/* Collective: every rank's host facts, on rank 0 as the run fingerprint
 * (hosts with their ranks, MPI library, ranks per host); NULL elsewhere.
 * hostnames (rank 0, optional): receives a malloc'd array of nranks names
 * (each 256 chars) for callers that group ranks by host. */
cJSON *dl_sys_fingerprint(MPI_Comm comm, char **hostnames);

/* A worker's NCCL debug file: {"transports": {"P2P": n, "SHM": n,
 * "NET/IB": n, ...}, "channels": n, "gdr": bool, "nccl_version": "..."}.
 * NULL when the file cannot be read. */
cJSON *dl_ncclog_parse(const char *path);
/* NULL when what NCCL did agrees with the profile's env and intended
 * transport ("P2P", "SHM", "NET", "NET/IB", "NET/Socket"; NULL: none). */
const char *dl_ncclog_contradiction(const cJSON *observed, const cJSON *env, const char *intent,
                                    char *buf, size_t len);

#endif
