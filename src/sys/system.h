/* A system description (topologies/systems/NAME.json: GPUs per node, the
 * paths inside and between nodes, NICs, GPU memory figures), parsed in one
 * place for everyone who reads one: the sim backend models it, preflight
 * judges copies and bandwidth against it, report draws its line rate.
 * Strict: an unknown key or a bad figure is one line naming the file and
 * the key, DL_ERR_INPUT, never a guess. */
#ifndef DL_SYS_SYSTEM_H
#define DL_SYS_SYSTEM_H

#include "../util/util.h"

/* The paths a description may give, by their keys in "paths". */
typedef enum { DL_PATH_NVLINK, DL_PATH_PCIE, DL_PATH_SHM, DL_PATH_IB, DL_PATH_SOCKET,
               DL_PATH_COUNT } dl_path_id_t;
extern const char *const dl_path_names[DL_PATH_COUNT];

typedef struct {
    double bw;  /* GB/s per GPU per direction (socket: per node); 0: not given */
    double lat; /* us */
    double eff; /* the fraction of bw a transfer reaches, (0, 1] */
} dl_path_t;

#define DL_SYSTEM_MAX_GPN 1024        /* GPUs (or NICs) of one node */
#define DL_SYSTEM_MAX_RANKS (1 << 20) /* nodes x GPUs a node */

typedef struct dl_system {
    char name[64];
    char file[1024];           /* the file read */
    int gpus_per_node, nodes;  /* nodes: the file's (1 when not given) */
    int p2p;                   /* GPUs talk directly (NVLink or PCIe P2P) */
    int nics, gdr;             /* NICs a node, GPUDirect RDMA over them */
    double nic_gbit;           /* each NIC's line rate, Gb/s */
    double launch_us, jitter;  /* a call's fixed cost; the model's spread (a fraction) */
    dl_path_t path[DL_PATH_COUNT];
    double gpu_memory_gbyte_s;    /* "gpu": HBM bandwidth, -1 when not given */
    double gpu_host_link_gbyte_s; /* "gpu": the GPU's host link, -1 when not given */
} dl_system_t;

/* A name (NAME.json in $DLCOMM_SYSTEMS, then the data folders) or a path,
 * read and checked. opt names the option it came from ("--system") for the
 * line about a name that is none (with the closest name there is). */
dl_status_t dl_system_load(const char *opt, const char *name_or_path, dl_system_t *s);
/* The same for a path alone. */
dl_status_t dl_system_read(const char *path, dl_system_t *s);

#endif
