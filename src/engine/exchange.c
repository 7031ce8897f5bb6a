/* The exchange of a profile in workers: the measurement loop's cross-rank
 * steps, run by the supervisor with non-blocking MPI on the profile's own
 * communicator while it watches its worker and listens for a peer's abort
 * (dl_sv_wait). Once the profile has failed on this rank a step fails at
 * once, so the loop ends instead of waiting on peers that have gone on. */
#include "supervisor.h"

#include <stdlib.h>
#include <string.h>

#include "../sys/watchdog.h"

/* Waits on one step. The step works on a copy (buf): a step abandoned when
 * the profile fails may still write it, so it is then leaked, never freed
 * under MPI's feet. */
static dl_status_t step(dl_sv_run_t *r, int rc, MPI_Request *req, void *buf, void *out,
                        size_t len)
{
    if (rc != MPI_SUCCESS) {
        free(buf);
        if (!r->over)
            dl_outcome_set(r, DL_RK_ERROR, DL_ERR_COMM, "an MPI step of the profile failed");
        r->over = 1;
        return DL_ERR_COMM;
    }
    dl_msg_t m = {0};
    dl_ev_t ev = dl_sv_wait(r, req, &m);
    if (ev == EV_REQ_DONE) {
        if (out && len)
            memcpy(out, buf, len);
        free(buf);
        return DL_OK;
    }
    if (ev == EV_TIMEOUT)
        dl_outcome_set(r, DL_RK_TIMEOUT_WAIT, DL_ERR_TIMEOUT,
                       "no progress for %.0f s while waiting on peers", r->e->cfg.timeout_s);
    else if (ev == EV_ABORT) /* its worker is idle: it has nothing to say */
        dl_outcome_set(r, DL_RK_PEER, DL_ERR_COMM, "ended because a peer failed");
    else
        dl_sv_fail(r, ev, &m);
    dl_msg_free(&m);
    r->over = 1;
    return r->me.status != DL_OK ? (dl_status_t)r->me.status : DL_ERR_COMM;
}

static void *copy(dl_sv_run_t *r, const void *v, size_t len)
{
    void *b = malloc(len ? len : 1);
    if (!b)
        dl_watchdog_abort("out of memory (a step of the measurement loop)");
    if (v && len)
        memcpy(b, v, len);
    (void)r;
    return b;
}

static dl_status_t reduce(dl_sv_run_t *r, MPI_Comm comm, void *v, size_t n, MPI_Datatype t,
                          MPI_Op op, size_t esize)
{
    if (r->over)
        return DL_ERR_COMM;
    MPI_Request req;
    void *b = copy(r, v, n * esize);
    int rc = MPI_Iallreduce(MPI_IN_PLACE, b, (int)n, t, op, comm, &req);
    return step(r, rc, &req, b, v, n * esize);
}

static dl_status_t g_max(void *arg, double *v, size_t n)
{
    dl_sv_run_t *r = arg;
    return reduce(r, r->group, v, n, MPI_DOUBLE, MPI_MAX, sizeof(double));
}

static dl_status_t g_sum(void *arg, uint64_t *v, size_t n)
{
    dl_sv_run_t *r = arg;
    return reduce(r, r->group, v, n, MPI_UINT64_T, MPI_SUM, sizeof(uint64_t));
}

static dl_status_t w_max(void *arg, double *v, size_t n)
{
    dl_sv_run_t *r = arg;
    return reduce(r, r->relay, v, n, MPI_DOUBLE, MPI_MAX, sizeof(double));
}

static dl_status_t w_sum(void *arg, uint64_t *v, size_t n)
{
    dl_sv_run_t *r = arg;
    return reduce(r, r->relay, v, n, MPI_UINT64_T, MPI_SUM, sizeof(uint64_t));
}

static dl_status_t g_gather(void *arg, double v, double *out)
{
    dl_sv_run_t *r = arg;
    if (r->over)
        return DL_ERR_COMM;
    size_t len = r->grank == 0 ? (size_t)r->gsize * sizeof(double) : 0;
    void *b = copy(r, NULL, len);
    double *mine = copy(r, &v, sizeof(v)); /* leaked with b when abandoned */
    MPI_Request req;
    int rc = MPI_Igather(mine, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, 0, r->group, &req);
    dl_status_t st = step(r, rc, &req, b, out, len);
    if (st == DL_OK)
        free(mine);
    return st;
}

static dl_status_t g_bcast(void *arg, void *v, size_t len)
{
    dl_sv_run_t *r = arg;
    if (r->over)
        return DL_ERR_COMM;
    MPI_Request req;
    void *b = copy(r, v, len);
    int rc = MPI_Ibcast(b, (int)len, MPI_BYTE, 0, r->group, &req);
    return step(r, rc, &req, b, v, len);
}

void dl_sv_exchange_init(dl_sv_run_t *r)
{
    const dl_engine_cfg_t *c = &r->e->cfg;
    int split = c->split.op != DL_SPLIT_NONE;
    r->xa = (dl_xcomm_t){.max_doubles = w_max, .sum_u64 = w_sum, .arg = r, .rank = c->rank,
                         .nranks = c->nranks};
    r->x = (dl_xcomm_t){.max_doubles = g_max, .sum_u64 = g_sum, .gather_double = g_gather,
                        .bcast = g_bcast, .arg = r, .rank = r->grank, .nranks = r->gsize,
                        .all = split ? &r->xa : NULL,
                        .group = split ? dl_split_group(&c->split, c->rank) : 0,
                        .groups = split && c->split.groups > 0 ? c->split.groups : 1};
}
