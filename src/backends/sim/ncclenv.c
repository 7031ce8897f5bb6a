/* What the profile's NCCL_* environment selects in the model, as NCCL
 * would on the system described:
 *   path inside a node  NVLink/PCIe (P2P) -> host memory (NCCL_P2P_DISABLE=1)
 *                       -> the network (and NCCL_SHM_DISABLE=1)
 *   path between nodes  IB (GPUDirect unless NCCL_NET_GDR_LEVEL=LOC) or
 *                       sockets (NCCL_NET=Socket, NCCL_IB_DISABLE=1, no NIC)
 *   algorithm/protocol  NCCL_ALGO (Ring, Tree: all-reduce only) and NCCL_PROTO
 *                       (LL, LL128, Simple); unset: the fastest, as NCCL tunes. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* NCCL_ALGO / NCCL_PROTO (dl_nccl_env_list); unset, or nothing this model
 * knows: all, NCCL's own choice. */
static unsigned env_select(const char *name, const char *const *names, int n)
{
    int unknown;
    unsigned m = dl_nccl_env_list(getenv(name), names, n, &unknown);
    return m ? m : (1u << n) - 1;
}

/* IB's hop: per NIC, or with GPUDirect off a bounce through host memory. */
static dl_path_t ib_path(const dl_system_t *s, int per_gpu, const char **name)
{
    const char *gdr = getenv("NCCL_NET_GDR_LEVEL");
    int gdr_on = s->gdr && !(gdr && (strcasecmp(gdr, "LOC") == 0 || strcmp(gdr, "0") == 0));
    *name = gdr_on ? "ib (gpudirect)" : "ib (staged through host memory)";
    dl_path_t p = s->path[DL_PATH_IB];
    double nic = s->nic_gbit / 8.0 * p.eff; /* GB/s per NIC */
    p.bw = per_gpu ? nic * (s->nics < s->gpus_per_node ? (double)s->nics / s->gpus_per_node : 1)
                   : nic * s->nics;
    if (!gdr_on) { /* its bandwidth and a copy's latency */
        const dl_path_t *shm = &s->path[DL_PATH_SHM];
        double host = shm->bw * shm->eff * (per_gpu ? 1 : s->gpus_per_node);
        p.bw = p.bw < host ? p.bw : host;
        p.lat += shm->lat;
    }
    return p;
}

/* The network hop, per node (sockets) or per NIC (IB). */
static dl_path_t net_path(const dl_system_t *s, int per_gpu, const char **name)
{
    const char *net = getenv("NCCL_NET");
    int ib = s->nics > 0 && !env_on("NCCL_IB_DISABLE") && !(net && strcasecmp(net, "Socket") == 0);
    if (ib)
        return ib_path(s, per_gpu, name);
    *name = "socket";
    dl_path_t p = s->path[DL_PATH_SOCKET];
    p.bw *= p.eff / (per_gpu ? s->gpus_per_node : 1);
    return p;
}

void sim_env_select(sim_ctx_t *c)
{
    const dl_system_t *s = &c->sys;
    int p2p = s->p2p && !env_on("NCCL_P2P_DISABLE");
    int k = !p2p ? -1 : s->path[DL_PATH_NVLINK].bw > 0 ? DL_PATH_NVLINK : DL_PATH_PCIE;
    if (k < 0 && !env_on("NCCL_SHM_DISABLE"))
        k = DL_PATH_SHM;
    if (k >= 0) {
        c->intra = s->path[k];
        c->intra.bw *= c->intra.eff;
        c->intra_name = dl_path_names[k];
    } else {
        c->intra = net_path(s, 1, &c->intra_name);
    }
    c->inter = net_path(s, 0, &c->inter_name);
    c->algos = env_select("NCCL_ALGO", (const char *const[]){"Ring", "Tree"}, 2);
    c->protos = env_select("NCCL_PROTO", sim_proto_names, SIM_NPROTOS);
}
