/* The sim backend's parts (internal): the model of a system description
 * (model.c), what a profile's NCCL_* environment selects in it
 * (ncclenv.c), the emulated NCCL debug log (debuglog.c), and the ops
 * (sim.c). The description itself is sys/system.c's. */
#ifndef DL_BACKENDS_SIM_H
#define DL_BACKENDS_SIM_H

#include "../backends.h"
#include "../../sys/system.h"

/* The sim's own options (sweep --system, --sim-nodes). */
typedef struct {
    const char *system; /* a name or path; setup makes it the file's path (file) */
    long nodes;         /* 0: the file's */
    double teardown_s;  /* fini's length: NCCL's communicator teardown (its proxy
                         * thread polls every 0.5 s), for the engine's tests */
    char file[1024];    /* setup's: the description's path */
} sim_opts_t;

enum { SIM_LL, SIM_LL128, SIM_SIMPLE, SIM_NPROTOS };
extern const char *const sim_proto_names[SIM_NPROTOS];

typedef struct {
    dl_system_t sys;
    int rank, nranks, model_ranks, nodes;
    /* The modelled group this process's figures are for (--split; else the
     * whole model): its ranks, the nodes it spans, its most ranks on one
     * node, and how many spanning groups share a node's NICs with it. */
    int g_ranks, g_nodes, g_gpn, g_share;
    dl_path_t intra, inter; /* effective hops: bw already x efficiency */
    const char *intra_name, *inter_name;
    unsigned algos, protos; /* bit 0 ring, 1 tree; bit i = proto i */
    uint32_t id_sum;
    uint64_t calls;
    double teardown_s; /* --sim-teardown */
    dl_choice_t chose; /* the model's choice for the case check last ran */
} sim_ctx_t;

/* model.c: the whole model of nodes (0: the file's) on one group. */
void sim_model_init(sim_ctx_t *c, int nodes);
/* --split: this process's group of the modelled ranks. */
dl_status_t sim_model_groups(sim_ctx_t *c, const dl_split_t *sl, int world_rank);
/* Microseconds of one call: the fastest algorithm and protocol allowed. */
double sim_best_us(const sim_ctx_t *c, const dl_case_t *k);
/* The same, with the choice behind it: tree (0 ring, 1 tree) and the
 * protocol (SIM_LL, ...). */
double sim_pick(const sim_ctx_t *c, const dl_case_t *k, int *tree, int *proto);
/* Whether the model has the collective (a call table entry). */
int sim_model_has(dl_coll_id_t id);

/* ncclenv.c: the paths, algorithms and protocols the environment leaves. */
void sim_env_select(sim_ctx_t *c);

/* debuglog.c: NCCL's channel lines for the modelled paths, where the
 * profile asked for NCCL_DEBUG=INFO into NCCL_DEBUG_FILE. */
void sim_debug_log(const sim_ctx_t *c);

#endif
