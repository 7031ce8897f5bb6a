/* Where a backend runs is a wrapper, as the fault injection is: this one
 * forwards each call of the measurement loop to the worker that runs the
 * backend (one request and its reply), and answers what the loop asks
 * besides (traits, entered, chose) from what the replies carried. */
#include "remote.h"

#include <stdlib.h>
#include <string.h>

#define HDR 8 /* int32 status, int32 own */

dl_status_t dl_remote_open(dl_remote_t *rm, const dl_wire_open_t *q, char **info)
{
    dl_msg_t r;
    *info = NULL;
    memset(&rm->traits, 0, sizeof(rm->traits));
    dl_status_t st = rm->ask(rm->arg, DL_MSG_SV_OPEN, q, sizeof(*q), &r);
    if (st == DL_OK && r.len < HDR + sizeof(rm->traits))
        st = DL_ERR_COMM;
    if (st == DL_OK) {
        memcpy(&rm->traits, (char *)r.data + HDR, sizeof(rm->traits));
        if (r.len > HDR + sizeof(rm->traits))
            *info = strdup((char *)r.data + HDR + sizeof(rm->traits));
    }
    dl_msg_free(&r);
    return st;
}

static dl_status_t ask_case(dl_remote_t *rm, uint16_t type, const dl_case_t *c, int iters,
                            int timed, dl_msg_t *r)
{
    dl_wire_case_t w = {.coll = c->coll->id, .iters = iters, .timed = timed, .c = *c};
    w.c.coll = NULL;
    return rm->ask(rm->arg, type, &w, sizeof(w), r);
}

dl_status_t dl_remote_prepare(void *ctx, const dl_case_t *c)
{
    dl_msg_t r;
    dl_status_t st = ask_case(ctx, DL_MSG_SV_PREPARE, c, 0, 0, &r);
    dl_msg_free(&r);
    return st;
}

dl_status_t dl_remote_run(void *ctx, const dl_case_t *c, int iters, double *times, double *total)
{
    dl_remote_t *rm = ctx;
    dl_msg_t r;
    double asked = dl_now();
    dl_status_t st = ask_case(rm, DL_MSG_SV_RUN, c, iters, times != NULL, &r);
    size_t need = HDR + sizeof(double) * (2 + (times ? (size_t)iters : 0));
    if (st == DL_OK && r.len != need)
        st = DL_ERR_COMM;
    if (st == DL_OK) {
        const double *v = (const double *)((char *)r.data + HDR);
        memcpy(total, v, sizeof(double));
        /* When its last call began, on this side's clock: the request's
         * trip is not the rank's lateness (the loop's arrivals read it). */
        double delay;
        memcpy(&delay, v + 1, sizeof(double));
        rm->entered = asked + delay;
        if (times)
            memcpy(times, v + 2, (size_t)iters * sizeof(double));
    }
    dl_msg_free(&r);
    return st;
}

dl_status_t dl_remote_check(void *ctx, const dl_case_t *c, uint64_t *wrong)
{
    dl_remote_t *rm = ctx;
    dl_msg_t r;
    dl_status_t st = ask_case(rm, DL_MSG_SV_CHECK, c, 0, 0, &r);
    if (st == DL_OK && r.len == HDR + sizeof(uint64_t) + sizeof(dl_choice_t)) {
        memcpy(wrong, (char *)r.data + HDR, sizeof(uint64_t));
        memcpy(&rm->choice, (char *)r.data + HDR + sizeof(uint64_t), sizeof(dl_choice_t));
    } else if (st == DL_OK) {
        st = DL_ERR_COMM;
    }
    dl_msg_free(&r);
    return st;
}

static dl_status_t r_probe(char *why, size_t len) { (void)why; (void)len; return DL_OK; }
static dl_status_t r_init(const dl_backend_cfg_t *cfg, void **ctx) { (void)cfg; (void)ctx; return DL_OK; }
static void r_fini(void *ctx) { (void)ctx; }
static void r_traits(void *ctx, dl_backend_traits_t *t) { *t = ((dl_remote_t *)ctx)->traits; }
static double r_entered(void *ctx) { return ((dl_remote_t *)ctx)->entered; }
static void r_chose(void *ctx, dl_choice_t *out) { *out = ((dl_remote_t *)ctx)->choice; }

void dl_remote_ops(dl_backend_ops_t *ops, const dl_backend_ops_t *inner)
{
    *ops = (dl_backend_ops_t){.name = inner->name, .caps = inner->caps, .probe = r_probe,
                              .init = r_init, .prepare = dl_remote_prepare, .run = dl_remote_run,
                              .check = dl_remote_check, .fini = r_fini,
                              .supports = inner->supports, .traits = r_traits,
                              .entered = r_entered, .chose = inner->chose ? r_chose : NULL,
                              .max_count = inner->max_count};
}
