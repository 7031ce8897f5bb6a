/*
 * engine: one worker process per (profile, rank). NCCL reads most of its
 * settings once per process, so every profile runs in fresh processes with
 * that profile's environment; a hung or crashed worker is killed, reported
 * with its rank, and the sweep goes on to the next profile.
 *
 * Each MPI rank is a supervisor. For a profile it posix_spawns
 * /proc/self/exe as `dlcomm __worker RUNDIR PROFILE RANK` (no shell) with
 * the socket on fd 3, stdout/stderr in RUNDIR/workers/PROFILE.rankR.log,
 * and NCCL_DEBUG_FILE=RUNDIR/workers/PROFILE.rankR.nccl.log. The worker
 * opens the backend and serves its calls; the measurement loop
 * (dl_plan_run) runs in the supervisor, over MPI, and reaches the backend
 * through a wrapper (remote.c) whose every call is one request: where a
 * backend runs is a wrapper, as the fault injection is.
 *
 * Protocol (socketpair, both ends the same executable): every message is a
 * 12-byte header then `len` payload bytes. One vocabulary for every
 * command (sweep, tune, preflight):
 *   header  uint32 magic 'DLCW' | uint16 version | uint16 type | uint32 len
 *   W->S HELLO    uint32 version                     first message
 *   S->W CONFIG   dl_wire_config_t + the backend's options as their JSON
 *                 echo (opts_len bytes)
 *   S->W SV_*     a request; W->S the reply of the same type: int32
 *                 status, int32 own (this rank's backend failed, not a
 *                 peer), then the reply's figures (below)
 *   W->S BCAST_ID blob (root's content matters)      S->W: root's blob
 *   W->S XC_MAX   n doubles                          S->W: element-wise max
 *   W->S XC_SUM   n uint64                           S->W: element-wise sum
 *   W->S XC_GATHER one double                        S->W: nranks doubles (rank 0)
 *                 only inside SV_OPEN: the backend's own init (NCCL's
 *                 unique id), relayed over the group's communicator
 *   S->W DONE     no more requests: the worker tears down and exits
 * A version mismatch in HELLO ends the profile with an error.
 *
 * Faults: a supervisor ends its profile when its worker does not answer a
 * request within --timeout (timeout), closes the socket or dies (crashed),
 * or its backend fails (the loop's agreement tells every rank); it then
 * tells every peer (a point-to-point abort message each supervisor polls
 * for while it waits on its worker or on MPI), kills its worker (SIGTERM,
 * then SIGKILL after a grace period), and joins one agreement per profile
 * (non-blocking allgather of each rank's outcome) after which every
 * supervisor knows the profile's status and who failed. The profile's
 * MPI steps, the loop's and the relayed init steps alike, are non-blocking
 * calls on a communicator of its own, abandoned when the profile fails, so
 * a half-done step never meets the agreement.
 *
 * Fault injection (DLCOMM_INJECT): parsed once by the command, carried in
 * CONFIG, planted in the worker by the one wrapper every backend runs
 * through (dl_inject_wrap, backends.h), as in-process backends do.
 *
 * A session (preflight) is the same worker and the same requests, kept
 * open across groups of ranks; docs/dev/engine.md tells the whole shape.
 */
#ifndef DL_ENGINE_H
#define DL_ENGINE_H

#include <cjson/cJSON.h>
#include <mpi.h>
#include <stdint.h>

#include "../measure/measure.h"

#define DL_WIRE_MAGIC 0x57434c44u /* "DLCW" little-endian */
#define DL_WIRE_VERSION 7
#define DL_WIRE_MAX_LEN (64u << 20)

typedef enum {
    DL_MSG_HELLO = 1,
    DL_MSG_CONFIG,
    DL_MSG_BCAST_ID,
    DL_MSG_XC_MAX,
    DL_MSG_XC_SUM,
    DL_MSG_XC_GATHER,
    DL_MSG_DONE,
    /* S->W request, W->S reply of the same type: int32 status, int32 own,
     * then the reply's figures. */
    DL_MSG_SV_OPEN,    /* dl_wire_open_t -> dl_backend_traits_t, describe()'s JSON text */
    DL_MSG_SV_PREPARE, /* dl_wire_case_t */
    DL_MSG_SV_RUN,     /* dl_wire_case_t -> double total, seconds from the request to
                        * when its last call began, then iters times (timed) */
    DL_MSG_SV_CHECK,   /* dl_wire_case_t -> uint64 wrong, dl_choice_t (the backend's
                        * chose(), zero where it has none) */
    DL_MSG_SV_CLOSE,   /* the backend's fini; the worker stays for the next OPEN */
} dl_msg_type_t;

typedef struct {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t len;
} dl_wire_hdr_t;

/* Both ends are the same executable, so fixed-layout structs are safe;
 * pointers never travel (collectives go by id). */
typedef struct {
    dl_inject_t inject;   /* the command's DLCOMM_INJECT, parsed */
    dl_split_t split;     /* --split: the backend's init learns its group */
    int32_t rank, nranks, local_rank, local_size; /* in the job's world */
    char backend[32], profile[64], run_dir[1024];
    uint32_t opts_len;    /* followed by the backend's options, JSON text */
} dl_wire_config_t;

/* SV_OPEN: the backend on rank `rank` of a group of `nranks` (the world's
 * without --split), a call that takes longer than deadline_s gives up. */
typedef struct {
    int32_t rank, nranks;
    uint64_t max_bytes;
    double deadline_s;
} dl_wire_open_t;

/* A case on the wire: its collective by id. */
typedef struct {
    int32_t coll, iters, timed;
    dl_case_t c;
} dl_wire_case_t;

/* A message in memory. */
typedef struct {
    uint16_t type;
    uint32_t len;
    void *data; /* malloc'd, NUL-terminated one past len */
} dl_msg_t;

dl_status_t dl_msg_send(int fd, uint16_t type, const void *data, uint32_t len);
dl_status_t dl_msg_send2(int fd, uint16_t type, const void *a, uint32_t alen, const void *b,
                         uint32_t blen);
/* Blocking read of one message. DL_ERR_CRASH on EOF, DL_ERR_COMM on bad framing. */
dl_status_t dl_msg_recv(int fd, dl_msg_t *m);
void dl_msg_free(dl_msg_t *m);
/* Sends CONFIG: w (its rank fields set by the caller) with the backend,
 * profile, run folder and the backend's options as their echo. */
dl_status_t dl_config_send(int fd, dl_wire_config_t *w, const dl_backend_ops_t *be,
                           const void *be_opts, const char *profile, const char *run_dir);

/* ---- profiles (topologies/profiles/NAME.json or a path) ---- */

typedef struct {
    char name[64];
    char path[1024];
    char description[256];
    char **env; /* "KEY=VALUE", nenv entries */
    int nenv;
    cJSON *intent;       /* owned */
    int min_nodes, max_nodes; /* applies_when; 0 = no bound */
} dl_profile_t;

/* Names or .json paths, comma-separated. Unknown name or malformed file:
 * one line naming the file and the problem, DL_ERR_INPUT. */
dl_status_t dl_profiles_load(const char *list, dl_profile_t **out, int *n);
dl_status_t dl_profile_load_file(const char *path, dl_profile_t *p);
void dl_profiles_free(dl_profile_t *p, int n);
/* NULL when it applies to a run of `nodes` nodes, else the reason (static buffer in p). */
const char *dl_profile_skip_reason(const dl_profile_t *p, int nodes, char *buf, size_t len);
/* Every profile in the search path (first of each name wins); caller frees. */
dl_status_t dl_profiles_list_all(dl_profile_t **out, int *n);

/* ---- the supervisor side ---- */

typedef struct {
    const dl_backend_ops_t *be; /* a DL_CAP_WORKER backend */
    const void *be_opts;     /* its options (be->opts' struct), sent to every worker */
    const dl_inject_t *inject; /* NULL: none */
    double timeout_s;        /* no message from the worker for this long: hung */
    const char *run_dir;
    MPI_Comm world;          /* duplicated by dl_engine_open */
    int rank, nranks, local_rank, local_size;
    int nodes;               /* real hosts in the job */
    dl_split_t split;        /* --split: each profile's backend opens on the group */
    uint64_t max_bytes;      /* the largest call the loop will ask for */
} dl_engine_cfg_t;

typedef struct dl_engine dl_engine_t;

dl_status_t dl_engine_open(const dl_engine_cfg_t *cfg, dl_engine_t **out);
void dl_engine_close(dl_engine_t *e);
/* The per-profile agreement could not complete (a peer is gone): no more MPI. */
int dl_engine_broken(const dl_engine_t *e);

/* The outcome of one profile, the same on every rank. */
typedef enum {
    DL_PROF_OK,
    DL_PROF_ERROR,
    DL_PROF_TIMEOUT,
    DL_PROF_CRASHED,
    DL_PROF_INTERRUPTED,
} dl_prof_status_t;
const char *dl_prof_status_str(dl_prof_status_t s);

/* One profile on every rank (collective over cfg->world), run as a
 * backend in the ranks is: begin (its worker started with the profile's
 * environment, the backend opened there), the measurement loop over
 * dl_engine_profile_ops (the worker's backend behind the remote wrapper,
 * and the profile's exchange: non-blocking MPI on a communicator of its
 * own, the group's with --split, x->all the world's), end. A begin that
 * fails has recorded why: skip the loop, still call end with its status.
 * Every wait (on the worker, on peers) is bounded by cfg->timeout_s and
 * ends at a peer's abort or a signal; a step or call after the profile
 * failed here fails at once, so the loop ends.
 *
 * end(st: the loop's status) ends the worker and agrees how the profile
 * ended. On rank 0, prof_json (the profile's run.json object) receives
 * status, reason, failures[] {rank, kind, reason}, backend facts
 * ("backend_info"), where the time went ("timing"); with NCCL's debug file,
 * "observed_transports" (rank 0's worker) and "transport_contradictions"
 * [{rank, reason}]: a profile whose channels contradict its env or intent.
 * Returns DL_OK unless the profile failed (then the status that ended it;
 * DL_ERR_INTERNAL when interrupted by a signal); frees the profile's run. */
typedef struct dl_sv_run dl_engine_prof_t;
dl_status_t dl_engine_profile_begin(dl_engine_t *e, const dl_profile_t *p, cJSON *prof_json,
                                    dl_engine_prof_t **out);
const dl_backend_ops_t *dl_engine_profile_ops(dl_engine_prof_t *r, void **ctx,
                                              const dl_xcomm_t **x);
dl_status_t dl_engine_profile_end(dl_engine_prof_t *r, dl_status_t st, dl_prof_status_t *pst);

/* SIGINT/SIGTERM handlers that make the supervisor end its workers and
 * stop; dl_engine_interrupted() gives the signal that arrived, or 0. */
void dl_engine_signals_install(void);
int dl_engine_interrupted(void);

/* ---- a worker as a measurement server (preflight) ----
 * A session is one worker per supervisor, with one profile's environment,
 * that opens the backend for whatever group of ranks the supervisor asks
 * (a communicator of its own per group, its id sent through the group's
 * exchange) and runs prepare/run/check on request. The supervisor sees it
 * as a backend, dl_session_ops, so a measurement loop in the supervisor
 * (preflight's) drives a GPU backend in a worker as it drives mpi. A worker
 * that does not answer within the timeout is killed (hung), one that dies
 * is crashed; either is this rank's own failure, and the next open starts
 * a fresh worker. */
typedef struct dl_session dl_session_t;
typedef struct {
    const dl_backend_ops_t *be; /* DL_CAP_WORKER */
    const void *be_opts;
    const dl_inject_t *inject;
    const dl_profile_t *profile;
    const char *run_dir;        /* worker logs under RUNDIR/workers */
    int rank, nranks, local_rank, local_size; /* in the job's world */
    double timeout_s;           /* no answer for this long: hung */
} dl_session_cfg_t;
dl_status_t dl_session_open(const dl_session_cfg_t *cfg, dl_session_t **out);
void dl_session_close(dl_session_t *s);
/* The backend the supervisor measures through: init's cfg->opts is the
 * session, cfg->xc the group's exchange (MPI), cfg->rank/nranks in it. */
extern const dl_backend_ops_t dl_session_ops;
/* Why this rank's last call failed on its own account ("" when it did not):
 * "hung: ...", "crashed: ..." (level 3), "error: ..." (2), "gave up: ..."
 * (1: its backend's own deadline passed, as when it waits on a hung peer). */
const char *dl_session_fault(const dl_session_t *s, int *level);
/* The backend's describe() facts from the last open (JSON text), or NULL. */
const char *dl_session_info(const dl_session_t *s);

/* ---- the worker side ---- */

/* `dlcomm __worker RUNDIR PROFILE RANK`: the socket is fd 3. Exit code as usual. */
int dl_worker_main(int fd);

#endif
