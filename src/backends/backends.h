/*
 * backends: who runs a collective. Each backend is one ops table (name,
 * version, probe, init, prepare, run, check, fini) registered in
 * dl_backends[]. "Not available here" is DL_ERR_UNAVAILABLE from probe,
 * with a reason, never a crash. The measurement loop (src/measure) drives
 * any backend the same way.
 *
 *   mpi  : the supervisors themselves, host buffers, MPI collectives.
 *   sim  : an analytic model of a system description (worker process).
 *   nccl : device buffers and NCCL (worker process; built when NCCL is found).
 */
#ifndef DL_BACKENDS_H
#define DL_BACKENDS_H

#include "../util/util.h"
#include "../../collectives/collectives.h"

#define DL_BACKEND_ABI 1

/* One collective call, fully described. */
typedef struct {
    const dl_coll_t *coll;
    dl_dtype_t dtype;
    dl_op_t op;
    dl_place_t place;
    int root;
    uint64_t bytes_requested;
    dl_counts_t counts;
} dl_case_t;

/* What a backend is told at init. */
typedef struct {
    int rank, nranks;           /* in the world of this measurement */
    int local_rank, local_size; /* on this host */
    uint64_t max_bytes;         /* largest requested size */
    const char *system_path;    /* sim: system description file */
    int sim_nodes;              /* sim: modelled node count (0 = real) */
    int graph_iters;            /* nccl: iterations captured per CUDA graph (0 = off) */
    const char *profile_name;   /* the profile this worker measures */
    const char *run_dir;        /* the run's output folder (worker logs go below it) */
    double deadline_s;          /* a run/check call that takes longer must give up
                                   (nccl: abort the communicator) and say DL_ERR_TIMEOUT */
    void *comm;                 /* mpi: MPI_Comm *, others NULL */
    /* Bootstrap id exchange for backends that need one (nccl): the engine
     * supplies a function that, given this rank's blob (root only), returns
     * the root's blob on every rank. */
    dl_status_t (*bcast_id)(void *arg, void *blob, size_t len);
    void *bcast_arg;
} dl_backend_cfg_t;

typedef struct dl_backend_ops {
    const char *name;
    int abi;
    int modelled; /* results come from a model, not a measurement */
    /* Whether it can run here; fills why (one line) when not. */
    dl_status_t (*probe)(char *why, size_t len);
    dl_status_t (*init)(const dl_backend_cfg_t *cfg, void **ctx);
    /* Buffers sized for the case, filled with the pattern. */
    dl_status_t (*prepare)(void *ctx, const dl_case_t *c);
    /* Runs iters calls back to back; times[k] = seconds of call k on this
     * rank (NULL: don't time each); *total = seconds of the whole batch. */
    dl_status_t (*run)(void *ctx, const dl_case_t *c, int iters, double *times, double *total);
    /* Refills, runs once, counts wrong result elements on this rank. */
    dl_status_t (*check)(void *ctx, const dl_case_t *c, uint64_t *wrong);
    void (*fini)(void *ctx);
    /* Whether the library can run this case at all (NULL: every case); a
     * sweep leaves the others out with a warning naming why. */
    int (*supports)(const dl_case_t *c, char *why, size_t len);
    /* Free-form facts for the run record (versions, devices); may be NULL. */
    void (*describe)(void *ctx, void *json_obj);
} dl_backend_ops_t;

extern const dl_backend_ops_t *const dl_backends[];
extern const size_t dl_backend_count;
const dl_backend_ops_t *dl_backend_find(const char *name);

/* sim: checks a system description (a topologies/systems file) before a
 * sweep starts; one line naming the file and the problem, DL_ERR_INPUT. */
dl_status_t dl_sim_system_check(const char *path, int *nodes, int *gpus_per_node);

/* Fault injection (tests only; off unless DLCOMM_INJECT is set). See README. */
typedef enum { DL_INJECT_NONE, DL_INJECT_HANG, DL_INJECT_CRASH, DL_INJECT_CORRUPT, DL_INJECT_ERROR,
               DL_INJECT_SLOW } dl_inject_kind_t;
typedef struct {
    dl_inject_kind_t kind;
    int rank;            /* -1 = every rank */
    char profile[64];    /* "" = every profile */
    double factor;       /* slow: time multiplier */
} dl_inject_t;
/* Parses DLCOMM_INJECT="kind:rank[:profile[:factor]]". Bad text: DL_ERR_USAGE. */
dl_status_t dl_inject_parse(const char *s, dl_inject_t *out);
/* The injection that applies to this rank and profile, or NONE. */
dl_inject_kind_t dl_inject_active(const dl_inject_t *inj, int rank, const char *profile);

#endif
