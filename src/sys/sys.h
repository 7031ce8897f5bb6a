/*
 * sys: what dlcomm knows about the hosts it runs on: this host's facts
 * (name, CPU, kernel, OS), the MPI library, and, across the job, which
 * ranks share a host. The fingerprint in run.json comes from here.
 */
#ifndef DL_SYS_H
#define DL_SYS_H

#include <cjson/cJSON.h>
#include <mpi.h>

#include "../util/util.h"

typedef struct {
    char host[256];   /* the machine's hostname (folders, logs) */
    char key[256];    /* the host as NCCL sees it (dl_sys_host_key) */
    char cpu[128];
    int cores;
    char kernel[128];
    char os[128];
    int pid;
} dl_host_info_t;

void dl_sys_host_info(dl_host_info_t *h);

/* ---- one idea of a host: NCCL's ----
 * Ranks are one host exactly when NCCL treats them as one: the same
 * NCCL_HOSTID when it is set, else the same hostname on the same boot (the
 * kernel's boot id, as NCCL appends it). The key is "NAME\nBOOTID" or
 * NCCL_HOSTID's value; what is shown is the part before the newline. The
 * GPU-sharing check, preflight's hosts, run.json's hosts and the job's node
 * count all group by it. */
#define DL_HOST_KEY_LEN 256
void dl_sys_host_key(char key[DL_HOST_KEY_LEN]);
/* The shown name of a key, in buf. */
void dl_sys_host_shown(const char *key, char *buf, size_t len);
/* Collective: every rank's host, on every rank: host_of[r] numbers hosts in
 * the order of their first rank; names[h] is host h's shown name. */
typedef struct {
    int nranks, nhosts;
    int *host_of;
    char (*names)[DL_HOST_KEY_LEN];
} dl_hosts_t;
dl_status_t dl_sys_hosts(MPI_Comm comm, dl_hosts_t *h);
void dl_sys_hosts_free(dl_hosts_t *h);
/* Several ranks on one GPU (a test mode of NCCL's code paths, docs/shared-gpu.md):
 * DLCOMM_SHARED_GPU=1 gives each rank its own NCCL host, NCCL_HOSTID
 * "HOSTNAME/rRANK" (unless NCCL_HOSTID is set already), before anything
 * asks what a host is. Any other value than unset, "" or 0/1: one line,
 * DL_ERR_USAGE. Sets *on. */
dl_status_t dl_sys_shared_gpu_env(int *on);
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
 * "NET/IB": n, ...}, "channels": n, "gdr": bool, "nccl_version": "...",
 * "env_applied": {NCCL_X: value NCCL says it took from the environment},
 * "network": "IB" | "Socket" | ..., "init_s": communicator start as NCCL
 * timed it}; the last three where the log has them. NULL when the file
 * cannot be read. */
cJSON *dl_ncclog_parse(const char *path);
/* NULL when what NCCL did agrees with the profile's env (the values NCCL
 * reports taking, the transports it forbids) and intended transport ("P2P",
 * "SHM", "NET", "NET/IB", "NET/Socket"; NULL: none). */
const char *dl_ncclog_contradiction(const cJSON *observed, const cJSON *env, const char *intent,
                                    char *buf, size_t len);

/* GPUs through NVML, loaded at run time (libnvidia-ml.so.1). A figure NVML
 * does not support on a device is -1. */
#define DL_GPU_MAX 16
#define DL_GPU_MAX_LINKS 18
typedef struct {
    int index;
    char name[96];
    char bus_id[32];          /* "0000:17:00.0" */
    long long ecc_volatile, ecc_aggregate; /* uncorrected ECC errors */
    int retired_dbe, retired_pending;      /* retired pages (double-bit), pending */
    int remap_unc, remap_pending, remap_failure; /* remapped rows (Ampere and later) */
    long long throttle;       /* clock event reasons bit mask */
    int temp_c;
    int pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;
    int nvlink_total, nvlink_up;
    char nvlink_peer[DL_GPU_MAX_LINKS][32]; /* bus id at the far end of each active link */
} dl_gpu_t;
typedef struct {
    int count;
    char driver[80];
    dl_gpu_t gpu[DL_GPU_MAX];
} dl_gpus_t;
/* Clock event reasons that mean the hardware slowed the GPU down. */
#define DL_GPU_HW_SLOWDOWN 0x8ULL
#define DL_GPU_SW_THERMAL 0x20ULL
#define DL_GPU_HW_THERMAL 0x40ULL
#define DL_GPU_HW_POWER_BRAKE 0x80ULL
/* DL_ERR_UNAVAILABLE with the reason in why (no NVML, no GPU). */
dl_status_t dl_sys_gpus(dl_gpus_t *out, char *why, size_t len);
/* One GPU's figures as JSON (keys with units: temperature_c, ...). */
cJSON *dl_gpu_json(const dl_gpu_t *g);

/* This host as hwloc (and NVML, when given) see it: NUMA nodes, cores, GPUs
 * with bus ids and NUMA nodes, NICs, and GPU-GPU / GPU-NIC path types named
 * as `nvidia-smi topo -m` names them (X, NV#, PIX, PXB, PHB, NODE, SYS). */
cJSON *dl_sys_topo(const dl_gpus_t *gpus);
/* The NUMA nodes (hwloc logical indices) this process's CPU binding
 * touches, as a bit mask, and how many NUMA nodes the host has. Returns
 * 1 when the binding covers every core of the host (not bound). */
int dl_sys_binding_numa(unsigned long long *mask, int *nnuma, char *cpus, size_t len);
/* The NUMA node of a PCI device by bus id, -1 when unknown. */
int dl_sys_pci_numa(const char *bus_id);
/* Collective: each rank's object (NULL: nothing to send) as an array on
 * rank 0, in rank order; NULL elsewhere. */
cJSON *dl_sys_gather_json(MPI_Comm comm, const cJSON *mine);
/* Collective: dl_sys_topo of every host (its first rank's view), as an
 * array on rank 0 with "nvml" saying "ok" or why not; NULL elsewhere. */
cJSON *dl_sys_topo_job(MPI_Comm comm);

#endif
