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
 *
 * The core never asks a backend's name: it reads caps (where it runs, what
 * it needs), parses the backend's own option table with the command's, and
 * hands it an exchange object for its cross-rank steps.
 */
#ifndef DL_BACKENDS_H
#define DL_BACKENDS_H

#include "../util/util.h"
#include "../../collectives/collectives.h"

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

/* --split (nccl-tests' NCCL_TESTS_SPLIT): rank r of the world is in the
 * group of colour r OP value (MOD r % k, DIV r / k, AND r & mask, OR r |
 * mask); groups are numbered by colour, a group's ranks keep the world's
 * order. Every group runs the same calls at the same time on a
 * communicator of its own (split.c). */
typedef enum { DL_SPLIT_NONE, DL_SPLIT_MOD, DL_SPLIT_DIV, DL_SPLIT_AND, DL_SPLIT_OR,
               DL_SPLIT_OPS } dl_split_op_t;
typedef struct {
    int32_t op, value;    /* dl_split_op_t; NONE: one group, the world */
    int32_t world;        /* ranks split (dl_split_check) */
    int32_t groups, size; /* how many groups, ranks in each (dl_split_check) */
} dl_split_t;
/* "MOD:2", "%2", "DIV:4", "/4", "AND:0x7", "&7", "OR:0b11", ... (NULL: none);
 * bad text: one line, DL_ERR_USAGE. */
dl_status_t dl_split_parse(const char *text, dl_split_t *out);
/* Against a world of n ranks: k must divide n for MOD and DIV, and every
 * group must have the same size; one line naming why not, DL_ERR_USAGE. */
dl_status_t dl_split_check(dl_split_t *s, int world);
int dl_split_group(const dl_split_t *s, int rank);  /* a world rank's group */
int dl_split_rank(const dl_split_t *s, int rank);   /* its rank in the group */
int dl_split_members(const dl_split_t *s, int group, int *ranks); /* world ranks, count */
void dl_split_name(const dl_split_t *s, char *buf, size_t len);   /* "MOD:2" */

/* The exchange object: the cross-rank steps a backend and the measurement
 * loop need, whoever carries them (MPI in the supervisors; for a backend's
 * init in a worker, the supervisor's relay). A backend never sees an MPI
 * communicator unless it is MPI itself (mpi_comm). */
typedef struct dl_xcomm {
    /* In place, element-wise max over ranks of n doubles. */
    dl_status_t (*max_doubles)(void *arg, double *v, size_t n);
    /* In place, element-wise sum over ranks of n uint64. */
    dl_status_t (*sum_u64)(void *arg, uint64_t *v, size_t n);
    /* Gathers one double per rank to rank 0 (out has nranks entries there). */
    dl_status_t (*gather_double)(void *arg, double v, double *out);
    /* Rank 0's len bytes, on every rank (a bootstrap id, say). */
    dl_status_t (*bcast)(void *arg, void *buf, size_t len);
    void *arg;
    int rank, nranks;
    /* Optional: told when this rank's backend failed, before the agreement
     * its peers (still inside the collective) may never reach. */
    void (*local_failure)(dl_status_t st);
    /* The MPI_Comm * the steps run over, for a backend that is MPI itself
     * (one that runs in the supervisors: not DL_CAP_WORKER); NULL in a worker. */
    void *mpi_comm;
    /* --split: the steps above are the group's; all is the same over every
     * group at once (the world), over which the measurement loop agrees its
     * batches, its stop and any failure, so the groups run their calls side
     * by side. NULL (and group 0 of 1) without a split. */
    const struct dl_xcomm *all;
    int group, groups;
} dl_xcomm_t;

/* The xcomm of ranks that are MPI processes (mpi_comm: MPI_Comm *, kept). */
void dl_xcomm_mpi_init(dl_xcomm_t *x, void *mpi_comm);

/* What a backend is told at init. */
typedef struct {
    int rank, nranks;           /* in the world of this measurement */
    int local_rank, local_size; /* on this host */
    uint64_t max_bytes;         /* largest requested size */
    const void *opts;           /* the backend's own options (its opts table's struct) */
    const char *profile_name;   /* the profile this worker measures */
    const char *run_dir;        /* the run's output folder (worker logs go below it) */
    double deadline_s;          /* a run/check call that takes longer must give up
                                   (nccl: abort the communicator) and say DL_ERR_TIMEOUT */
    const dl_xcomm_t *xc;       /* the cross-rank steps (bootstrap ids travel by bcast) */
    /* --split: rank and nranks above are the group's; the split and this
     * rank's place in the world (a model scales its groups from them).
     * NULL: no split. */
    const dl_split_t *split;
    int world_rank;
} dl_backend_cfg_t;

/* What the core asks of a backend instead of its name. */
enum {
    DL_CAP_WORKER = 1u << 0,    /* runs in worker processes, one per (profile, rank):
                                   -p profiles apply; else in the supervisors (mpi) */
    DL_CAP_MODELLED = 1u << 1,  /* results come from a model, not a measurement; it
                                   answers expect (below) */
    DL_CAP_SPLIT = 1u << 4,     /* runs on a group of the world's ranks (a communicator
                                   of the group's own): sweep --split, preflight scopes */
    DL_CAP_DEVICE = 1u << 5,    /* buffers live on a device (one GPU per rank) */
};

/* What the library chose for one call, where it says (NCCL: the
 * algorithm, protocol and channel count of its plan, as its profiler
 * events name them); "" and 0: not known. from: who said so ("profiler":
 * NCCL's own events on this rank; "model": a model's choice by NCCL's
 * rules on the described system, not one observed). */
typedef struct {
    char algo[16], proto[16];
    int nchannels;
    char from[16];
} dl_choice_t;

/* What init decided that the core must know (dl_backend_traits). */
typedef struct {
    int bus_ranks;  /* ranks the figures are for (a model's, not its processes); 0 = nranks */
    int unit_calls; /* calls in one timed unit (a graph replay); 0 = 1 */
    int nodes;      /* nodes the figures are for (a model's); 0 = the job's */
    unsigned colls_off; /* collectives this instance's settings leave no algorithm for
                         * (1 << dl_coll_id_t: NCCL_ALGO=Tree and all-gather), left out */
    char off_why[96];   /* why, for the one line saying so */
} dl_backend_traits_t;

/* Supervisor-side, before anything is written: resolves and checks the
 * backend's options (a system name to a path, say). What it resolved that
 * a record should keep (the sim: the description file) are facts, a JSON
 * object's text the command adds to its record as they are. */
typedef struct {
    int nodes;            /* modelled nodes (0: the job's real hosts) */
    int ranks;            /* modelled ranks (0: the job's ranks) */
    char facts[1536];     /* a JSON object's text, "" for none */
} dl_backend_setup_t;
/* Adds each of the setup's facts to a cJSON object (cJSON *). */
void dl_backend_facts_add(const dl_backend_setup_t *s, void *json_obj);

/* A model's answer for one call, without workers or a run (expect). */
typedef struct {
    double time_s;  /* one call */
    uint64_t bytes; /* the size the call moves (a row's "bytes", rounded as a sweep's) */
    int ranks;      /* the modelled ranks: nodes x the model's ranks a node */
} dl_expect_t;

typedef struct dl_backend_ops {
    const char *name;
    unsigned caps; /* DL_CAP_* */
    /* Options of this backend alone (fio's engine options): rows of its own
     * struct of opts_size bytes; parsed with the command's, echoed in
     * run.json, and carried to its workers whole. May be empty. */
    const dl_opt_t *opts;
    size_t nopts, opts_size;
    /* Resolves and checks opts in the supervisor (NULL: nothing to do);
     * one line naming the problem, DL_ERR_USAGE / DL_ERR_INPUT. */
    dl_status_t (*setup)(void *opts, dl_backend_setup_t *out);
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
    /* A worker's last step: its process exits right after, which releases
     * the context's memory, threads and device state at once. Only what
     * other processes wait on is released here (NULL: nothing is; NCCL:
     * the communicator's finalize, not its destroy). */
    void (*end)(void *ctx);
    /* Whether the library can run this case at all (NULL: every case); a
     * sweep leaves the others out with a warning naming why. */
    int (*supports)(const dl_case_t *c, char *why, size_t len);
    /* Free-form facts for the run record (versions, devices); may be NULL. */
    void (*describe)(void *ctx, void *json_obj);
    /* What init decided (NULL: the defaults: nranks, one call per unit). */
    void (*traits)(void *ctx, dl_backend_traits_t *t);
    /* dl_now() when the last call began, where something (the injection
     * wrapper's slow) made it begin after run was called; NULL: when run
     * was called. The measurement loop's arrivals read it. */
    double (*entered)(void *ctx);
    /* The largest element count one call takes (0: no limit); a sweep that
     * asks for more is refused before it starts, naming the limit. */
    uint64_t max_count;
    /* DL_CAP_MODELLED: the model's figure for one float32 sum call of
     * bytes on nodes nodes, asked in the supervisor after setup (preflight
     * judges a measurement by it); no worker, no run. */
    dl_status_t (*expect)(const void *opts, dl_coll_id_t coll, uint64_t bytes, int nodes,
                          dl_expect_t *out);
    /* What the library chose for the call the last check ran (NULL: never
     * known). Read once per row, after check and outside the timed calls,
     * so that watching the choice costs the timed figures nothing. */
    void (*chose)(void *ctx, dl_choice_t *out);
} dl_backend_ops_t;

extern const dl_backend_ops_t *const dl_backends[];
extern const size_t dl_backend_count;
const dl_backend_ops_t *dl_backend_find(const char *name);
/* --backend's values: auto and each backend built in (an option's choices). */
extern const dl_choices_t dl_backend_choices;
/* A command's line with every backend's rows after its own (sweep's), each
 * backend's struct at its offset in the set's target. */
dl_status_t dl_backend_optset(dl_optset_t *s, const dl_opt_t *base, size_t nbase, size_t base_size);
/* The same, then the rows of another command's table that this line lacks,
 * each refused (FIXED) with why: tune's line holds sweep's size and
 * collective options only to say they are sweep's. */
dl_status_t dl_backend_optset_refusing(dl_optset_t *s, const dl_opt_t *base, size_t nbase,
                                       size_t base_size, const dl_opt_table_t *other,
                                       const char *why);
/* Where backend be's struct starts in a set made by dl_backend_optset. */
void *dl_backend_optset_opts(const dl_optset_t *s, const dl_backend_ops_t *be);

/* The backend that models (DL_CAP_MODELLED, with expect): what a command
 * judges a measurement against; NULL when this build has none. */
const dl_backend_ops_t *dl_backend_model(void);
/* A backend's options from a command's own: its defaults, then each of its
 * rows that the command's table also has (the same name means the same
 * option: preflight's --system is the sim's) takes the command's value
 * (dl_opts_share). The struct is calloc'd (be->opts_size; the caller
 * frees), then set up (be->setup, into setup). */
dl_status_t dl_backend_opts_from(const dl_backend_ops_t *be, const dl_opt_t *cmd_opts,
                                 size_t ncmd, const void *cmd_target, void **opts,
                                 dl_backend_setup_t *setup);
/* --backend NAME or auto (the first measuring backend whose probe passes);
 * NULL with one line (when say) naming why. */
const dl_backend_ops_t *dl_backend_pick(const char *name, int say);
/* The same, saying in chose why this one: "asked for", or for auto the
 * backends tried and why each was passed over ("auto -> nccl: no CUDA GPU
 * is visible here (...) -> mpi"). */
const dl_backend_ops_t *dl_backend_choose(const char *name, int say, char *chose, size_t len);
static inline int dl_backend_has(const dl_backend_ops_t *be, unsigned cap)
{
    return (be->caps & cap) != 0;
}
/* The traits of an initialised backend, defaults filled in. */
void dl_backend_traits(const dl_backend_ops_t *be, void *ctx, int nranks, dl_backend_traits_t *t);

/* NCCL_ALGO's reach (ncclalgo.c, one rule for the nccl backend and the
 * sim): the collectives value `nccl_algo` leaves NCCL no algorithm for, as
 * 1 << dl_coll_id_t, with why ("NCCL_ALGO=Tree leaves ..."); 0 when unset
 * or in a form not read (per-function, unknown names). And the algorithms
 * NCCL has for a collective, "Ring, PAT, ..." ("" for send/recv ones). */
unsigned dl_nccl_algo_colls_off(const char *nccl_algo, char *why, size_t len);
/* An NCCL list value ("A,B" selects, "^A,B" excludes, any case) as a mask
 * over names[0..n); *unknown when a name is not among them or the value is
 * in NCCL's per-function form ("allreduce:tree;..."). 0 when unset. */
unsigned dl_nccl_env_list(const char *v, const char *const *names, int n, int *unknown);
void dl_nccl_algos_of(int coll, char *out, size_t len);

/* ---- fault injection (tests; off unless DLCOMM_INJECT is set) ----
 * DLCOMM_INJECT="kind:rank[:profile[:factor]]", parsed once by the command,
 * planted by one wrapper around any backend, with one meaning per kind:
 *   hang     the rank's call never returns
 *   crash    the rank's process dies (SIGSEGV); worker backends only
 *   error    the rank's call fails
 *   slow     the rank enters each call late, by (factor - 1) x its previous
 *            call's time, and that wait is part of its time of the call;
 *            entered() says when the call began, so it is seen arriving late
 *   corrupt  the rank's result of each check has one wrong element more */
typedef enum { DL_INJECT_NONE, DL_INJECT_HANG, DL_INJECT_CRASH, DL_INJECT_CORRUPT, DL_INJECT_ERROR,
               DL_INJECT_SLOW } dl_inject_kind_t;
typedef struct {
    int32_t kind;        /* dl_inject_kind_t */
    int32_t rank;        /* -1 = every rank */
    char profile[64];    /* "" = every profile */
    double factor;       /* slow: time multiplier (> 1) */
} dl_inject_t;
/* Parses the text (NULL or "": none). Bad text: one line, DL_ERR_USAGE. */
dl_status_t dl_inject_parse(const char *s, dl_inject_t *out);
/* Whether the injection can apply to this run (rank in range, a backend
 * it can act on); one line naming why not, DL_ERR_USAGE. */
dl_status_t dl_inject_validate(const dl_inject_t *inj, const dl_backend_ops_t *be, int nranks);
/* The injection that applies to this rank and profile, or NONE. */
dl_inject_kind_t dl_inject_active(const dl_inject_t *inj, int rank, const char *profile);

/* Wraps a backend so the injection happens around its calls. Pass &w->ops
 * and w to the measurement loop. */
typedef struct {
    const dl_backend_ops_t *inner;
    void *ctx;
    dl_backend_ops_t ops; /* the wrapper's, with the inner backend's capabilities */
    dl_inject_kind_t kind;
    double factor, last_call_s;
    double entered_s; /* dl_now() when its last call began, after any injected wait */
    int rank;
    int own_failure; /* set when this rank's backend (not a peer) failed */
} dl_inject_wrap_t;
void dl_inject_wrap(dl_inject_wrap_t *w, const dl_inject_t *inj, const dl_backend_ops_t *inner,
                    void *ctx, int rank, const char *profile);

#endif
