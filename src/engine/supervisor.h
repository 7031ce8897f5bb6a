/* Internal to the engine: one profile's run on one supervisor. */
#ifndef DL_ENGINE_SUPERVISOR_H
#define DL_ENGINE_SUPERVISOR_H

#include "remote.h"
#include "spawn.h"

struct dl_engine {
    dl_engine_cfg_t cfg;
    MPI_Comm ctl; /* abort messages and the per-profile agreement */
    int seq;      /* profiles run so far: tags abort messages per profile */
    int broken;   /* the agreement could not complete: no more MPI */
};

/* How one rank's part of a profile ended; ordered from harmless to worst. */
typedef enum {
    DL_RK_OK,
    DL_RK_PEER,         /* ended because a peer failed */
    DL_RK_ERROR_PEER,   /* its worker failed because a peer did */
    DL_RK_TIMEOUT_WAIT, /* deadline passed while waiting on peers */
    DL_RK_INTERRUPTED,  /* SIGINT/SIGTERM */
    DL_RK_ERROR,        /* its worker's backend failed */
    DL_RK_TIMEOUT,      /* its worker said nothing before the deadline */
    DL_RK_CRASHED,      /* its worker died or closed the socket */
} dl_rank_kind_t;

typedef struct {
    int32_t kind, status;
    char reason[240];
    char transports[200]; /* what NCCL used contradicts the profile: why ("" = fine) */
} dl_rank_outcome_t;

/* One profile's run as its supervisor sees it (the profile itself is a
 * dl_profile_t; a run record's profile a dl_rec_profile_t). */
struct dl_sv_run {
    dl_engine_t *e;
    const dl_profile_t *p;
    dl_worker_t w;
    MPI_Comm relay;   /* the profile's own communicator: every MPI step of it */
    MPI_Comm group;   /* --split: this rank's group of relay (else relay itself) */
    int grank, gsize; /* this rank in it */
    MPI_Request abort_req;
    int abort_buf, abort_tag, got_abort, done;
    int over;         /* the profile has failed here: no more steps, no more requests */
    double deadline;
    double t_start, t_ready, t_done; /* spawned; backend open (OPEN's reply); loop done */
    dl_rank_outcome_t me;
    cJSON *prof_json; /* rank 0 */
    /* What the loop measures through: the worker's backend behind the
     * remote wrapper, and the profile's exchange (the group's; xa the world's). */
    dl_remote_t rm;
    dl_backend_ops_t ops;
    dl_xcomm_t x, xa;
};
typedef struct dl_sv_run dl_sv_run_t;

/* outcome.c */
void dl_outcome_set(dl_sv_run_t *r, dl_rank_kind_t k, dl_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void dl_outcome_notify_peers(dl_sv_run_t *r);
/* Every rank's outcome; -1 when the agreement could not complete. */
int dl_outcome_agree(dl_sv_run_t *r, dl_rank_outcome_t *all);
dl_prof_status_t dl_outcome_record(dl_sv_run_t *r, const dl_rank_outcome_t *all);

/* observe.c: this rank's worker's NCCL debug file, parsed (NULL: none);
 * verdict gets a contradiction with the profile, or "". */
cJSON *dl_observe_transports(dl_sv_run_t *r, char *verdict, size_t len);

/* exchange.c: the profile's exchange, non-blocking MPI on its own
 * communicator, each step waited on with dl_sv_wait (worker watched, peer
 * aborts heard); a step fails at once once the profile has failed here. */
void dl_sv_exchange_init(dl_sv_run_t *r);

/* supervisor.c: what exchange.c waits with. */
typedef enum { EV_MSG, EV_REQ_DONE, EV_EOF, EV_TIMEOUT, EV_ABORT, EV_SIGNAL, EV_BAD } dl_ev_t;
dl_ev_t dl_sv_wait(dl_sv_run_t *r, MPI_Request *req, dl_msg_t *m);
/* Ends the profile here for an event that is not the awaited one. */
void dl_sv_fail(dl_sv_run_t *r, dl_ev_t ev, dl_msg_t *m);

#endif
