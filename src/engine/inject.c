/* DLCOMM_INJECT in workers: the faults happen around any backend's calls,
 * so the supervisor's handling of hangs, crashes and errors is tested the
 * same way whatever backend the worker runs. */
#include "engine.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static dl_status_t w_probe(char *why, size_t len) { (void)why; (void)len; return DL_OK; }
static dl_status_t w_init(const dl_backend_cfg_t *cfg, void **ctx) { (void)cfg; (void)ctx; return DL_OK; }
static void w_fini(void *ctx) { (void)ctx; }

static dl_status_t own(dl_inject_wrap_t *w, dl_status_t st)
{
    if (st != DL_OK)
        w->own_failure = 1;
    return st;
}

static dl_status_t w_prepare(void *ctx, const dl_case_t *c)
{
    dl_inject_wrap_t *w = ctx;
    return own(w, w->inner->prepare(w->ctx, c));
}

static dl_status_t w_run(void *ctx, const dl_case_t *c, int iters, double *times, double *total)
{
    dl_inject_wrap_t *w = ctx;
    switch (w->kind) {
    case DL_INJECT_HANG:
        dl_err("rank %d: injected hang in %s", w->rank, c->coll->name);
        for (;;)
            pause();
    case DL_INJECT_CRASH: {
        dl_err("rank %d: injected crash in %s", w->rank, c->coll->name);
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        _exit(139);
    }
    case DL_INJECT_ERROR:
        dl_err("rank %d: injected error in %s", w->rank, c->coll->name);
        w->own_failure = 1;
        return DL_ERR_COMM;
    default: break;
    }
    dl_status_t st = own(w, w->inner->run(w->ctx, c, iters, times, total));
    if (st == DL_OK && w->kind == DL_INJECT_SLOW) {
        for (int i = 0; times && i < iters; i++)
            times[i] *= w->factor;
        *total *= w->factor;
    }
    return st;
}

static dl_status_t w_check(void *ctx, const dl_case_t *c, uint64_t *wrong)
{
    dl_inject_wrap_t *w = ctx;
    dl_status_t st = own(w, w->inner->check(w->ctx, c, wrong));
    if (st == DL_OK && w->kind == DL_INJECT_CORRUPT)
        *wrong += 1;
    return st;
}

const dl_backend_ops_t dl_engine_inject_ops = {
    .name = "inject", .abi = DL_BACKEND_ABI, .probe = w_probe, .init = w_init,
    .prepare = w_prepare, .run = w_run, .check = w_check, .fini = w_fini,
};

dl_status_t dl_engine_inject_wrap(dl_inject_wrap_t *w, const dl_backend_ops_t *inner, void *ctx,
                                  int rank, const char *profile)
{
    dl_inject_t inj;
    w->inner = inner;
    w->ctx = ctx;
    w->ops = dl_engine_inject_ops;
    w->ops.supports = inner->supports;
    w->rank = rank;
    w->own_failure = 0;
    w->kind = DL_INJECT_NONE;
    w->factor = 1;
    dl_status_t st = dl_inject_parse(getenv("DLCOMM_INJECT"), &inj);
    if (st != DL_OK)
        return st;
    /* A measuring backend plants hang and corrupt where they are realistic
     * (nccl: a stream that never drains, a wrong element on the device);
     * crash, error and slow need no backend's help. A model has no such
     * place, so every kind is planted around it. */
    w->kind = dl_inject_active(&inj, rank, profile);
    if (!inner->modelled && (w->kind == DL_INJECT_HANG || w->kind == DL_INJECT_CORRUPT))
        w->kind = DL_INJECT_NONE;
    w->factor = inj.factor;
    if (w->kind != DL_INJECT_NONE)
        dl_info("rank %d: DLCOMM_INJECT %s applies to this worker", rank, getenv("DLCOMM_INJECT"));
    return DL_OK;
}
