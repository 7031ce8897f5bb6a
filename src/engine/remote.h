/* Internal to the engine: a backend that runs in a worker, seen from the
 * supervisor as a backend (remote.c). Every call is one request (SV_*) and
 * its reply; how a request travels and how long it may take is the
 * caller's (ask): the engine's waits with MPI, a session's without. */
#ifndef DL_ENGINE_REMOTE_H
#define DL_ENGINE_REMOTE_H

#include "engine.h"

/* Sends a request, waits for the reply of the same type (any relayed init
 * step served meanwhile). Returns the reply's status (or why none came);
 * the reply, its 8-byte header first, in *reply (freed by the caller). */
typedef dl_status_t (*dl_remote_ask_t)(void *arg, uint16_t type, const void *req, uint32_t len,
                                       dl_msg_t *reply);

typedef struct {
    dl_remote_ask_t ask;
    void *arg;
    dl_backend_traits_t traits; /* OPEN's reply */
    dl_choice_t choice;         /* the last CHECK's reply */
    double entered;             /* the last RUN's: its request's time + the reply's delay */
} dl_remote_t;

/* SV_OPEN; *info gets describe()'s JSON text (malloc'd; NULL: none). */
dl_status_t dl_remote_open(dl_remote_t *rm, const dl_wire_open_t *q, char **info);
/* The calls (ctx: the dl_remote_t). */
dl_status_t dl_remote_prepare(void *ctx, const dl_case_t *c);
dl_status_t dl_remote_run(void *ctx, const dl_case_t *c, int iters, double *times, double *total);
dl_status_t dl_remote_check(void *ctx, const dl_case_t *c, uint64_t *wrong);
/* The ops table of the served backend `inner`: its name, caps and supports
 * (its own table's: no request), the calls above, traits, entered and
 * chose from the replies. init and fini do nothing: the caller opens and
 * closes. */
void dl_remote_ops(dl_backend_ops_t *ops, const dl_backend_ops_t *inner);

#endif
