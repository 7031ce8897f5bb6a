/* Fault injection for tests: DLCOMM_INJECT="kind:rank[:profile[:factor]]",
 * parsed once by the command, then planted by one wrapper around whichever
 * backend measures, in a worker or in the supervisors alike (see
 * backends.h for what each kind means). */
#include "backends.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char *const kinds[] = {"none", "hang", "crash", "corrupt", "error", "slow"};

static dl_status_t bad(const char *s, const char *why, const char *what)
{
    dl_err("DLCOMM_INJECT='%s': %s%s%s%s", s, why, what ? " ('" : "", what ? what : "",
           what ? "')" : "");
    return DL_ERR_USAGE;
}

/* Splits on ':' keeping empty fields (strtok would skip them). */
static int split(char *buf, char **f, int max)
{
    int n = 0;
    for (char *p = buf;; n++) {
        if (n == max)
            return max + 1;
        f[n] = p;
        char *c = strchr(p, ':');
        if (!c)
            return n + 1;
        *c = '\0';
        p = c + 1;
    }
}

static dl_status_t parse_rank(const char *s, const char *t, int32_t *rank)
{
    if (strcmp(t, "*") == 0 || strcmp(t, "-1") == 0) {
        *rank = -1;
        return DL_OK;
    }
    char *end;
    errno = 0;
    long r = strtol(t, &end, 10);
    if (!*t || *end || errno || r < 0 || r > INT_MAX || t[0] == '+' || t[0] == ' ')
        return bad(s, "the rank must be a whole number >= 0, * or -1", t);
    *rank = (int32_t)r;
    return DL_OK;
}

dl_status_t dl_inject_parse(const char *s, dl_inject_t *out)
{
    memset(out, 0, sizeof(*out));
    out->rank = -1;
    out->factor = 2.0;
    if (!s || !*s)
        return DL_OK;
    if (strlen(s) > 200)
        return bad(s, "longer than 200 characters", NULL);
    char buf[256], *f[4];
    snprintf(buf, sizeof(buf), "%s", s);
    int n = split(buf, f, 4);
    if (n > 4)
        return bad(s, "at most kind:rank:profile:factor", NULL);
    size_t k;
    for (k = 1; k < DL_ARRAY_SIZE(kinds) && strcmp(f[0], kinds[k]) != 0; k++)
        ;
    if (k == DL_ARRAY_SIZE(kinds))
        return bad(s, "kind must be hang, crash, corrupt, error or slow", f[0]);
    out->kind = (int32_t)k;
    if (n < 2)
        return bad(s, "give a rank too (kind:rank, * for every rank)", NULL);
    if (parse_rank(s, f[1], &out->rank) != DL_OK)
        return DL_ERR_USAGE;
    if (n >= 3 && strcmp(f[2], "*") != 0) {
        if (!*f[2] || strlen(f[2]) >= sizeof(out->profile) || strspn(f[2],
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != strlen(f[2]))
            return bad(s, "the profile must be a profile name (letters, digits, _ . -) or *", f[2]);
        snprintf(out->profile, sizeof(out->profile), "%s", f[2]);
    }
    if (n == 4) {
        if (out->kind != DL_INJECT_SLOW)
            return bad(s, "only slow takes a factor", f[3]);
        char *end;
        errno = 0;
        double v = strtod(f[3], &end);
        if (!*f[3] || *end || errno || !isfinite(v) || !(v > 1) || v > 1000)
            return bad(s, "the slow factor must be a number above 1 and at most 1000", f[3]);
        out->factor = v;
    }
    return DL_OK;
}

dl_status_t dl_inject_validate(const dl_inject_t *inj, const dl_backend_ops_t *be, int nranks)
{
    if (inj->kind == DL_INJECT_NONE)
        return DL_OK;
    if (inj->rank >= nranks) {
        dl_err("DLCOMM_INJECT: rank %d does not exist: this run has %d rank%s (0..%d)",
               (int)inj->rank, nranks, nranks == 1 ? "" : "s", nranks - 1);
        return DL_ERR_USAGE;
    }
    if (inj->kind == DL_INJECT_CRASH && !dl_backend_has(be, DL_CAP_WORKER)) {
        dl_err("DLCOMM_INJECT: crash needs a worker backend (nccl, sim): the %s backend runs in "
               "the MPI ranks themselves, whose death ends the job outside dlcomm", be->name);
        return DL_ERR_USAGE;
    }
    if (inj->profile[0] && !dl_backend_has(be, DL_CAP_WORKER)) {
        dl_err("DLCOMM_INJECT: profile '%s' given, but the %s backend runs no profiles",
               inj->profile, be->name);
        return DL_ERR_USAGE;
    }
    return DL_OK;
}

dl_inject_kind_t dl_inject_active(const dl_inject_t *inj, int rank, const char *profile)
{
    if (inj->kind == DL_INJECT_NONE)
        return DL_INJECT_NONE;
    if (inj->rank >= 0 && inj->rank != rank)
        return DL_INJECT_NONE;
    if (inj->profile[0] && (!profile || strcmp(inj->profile, profile) != 0))
        return DL_INJECT_NONE;
    return (dl_inject_kind_t)inj->kind;
}

/* ---- the wrapper ---- */

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

static void spin_for(double s)
{
    double until = dl_now() + s;
    while (dl_now() < until)
        ;
}

/* slow: each call entered late by (factor - 1) x the previous call's time,
 * the wait counted in this rank's time of the call. Calls run one at a
 * time so the delay sits before each; the peers (real backends) wait. */
static dl_status_t run_slow(dl_inject_wrap_t *w, const dl_case_t *c, int iters, double *times,
                            double *total)
{
    *total = 0;
    for (int i = 0; i < iters; i++) {
        double delay = (w->factor - 1) * w->last_call_s, t = 0;
        spin_for(delay);
        w->entered_s = dl_now();
        dl_status_t st = own(w, w->inner->run(w->ctx, c, 1, &t, &(double){0}));
        if (st != DL_OK)
            return st;
        w->last_call_s = t;
        if (times)
            times[i] = t + delay;
        *total += t + delay;
    }
    return DL_OK;
}

static double w_entered(void *ctx) { return ((dl_inject_wrap_t *)ctx)->entered_s; }

static dl_status_t w_run(void *ctx, const dl_case_t *c, int iters, double *times, double *total)
{
    dl_inject_wrap_t *w = ctx;
    w->entered_s = dl_now();
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
    case DL_INJECT_SLOW: return run_slow(w, c, iters, times, total);
    default: return own(w, w->inner->run(w->ctx, c, iters, times, total));
    }
}

static dl_status_t w_check(void *ctx, const dl_case_t *c, uint64_t *wrong)
{
    dl_inject_wrap_t *w = ctx;
    dl_status_t st = own(w, w->inner->check(w->ctx, c, wrong));
    if (st == DL_OK && w->kind == DL_INJECT_CORRUPT)
        *wrong += 1;
    return st;
}

static void w_traits(void *ctx, dl_backend_traits_t *t)
{
    dl_inject_wrap_t *w = ctx;
    if (w->inner->traits)
        w->inner->traits(w->ctx, t);
}

static void w_chose(void *ctx, dl_choice_t *out)
{
    dl_inject_wrap_t *w = ctx;
    w->inner->chose(w->ctx, out);
}

void dl_inject_wrap(dl_inject_wrap_t *w, const dl_inject_t *inj, const dl_backend_ops_t *inner,
                    void *ctx, int rank, const char *profile)
{
    memset(w, 0, sizeof(*w));
    w->inner = inner;
    w->ctx = ctx;
    w->ops = (dl_backend_ops_t){.name = inner->name, .caps = inner->caps,
                                .probe = w_probe, .init = w_init, .prepare = w_prepare,
                                .run = w_run, .check = w_check, .fini = w_fini,
                                .supports = inner->supports, .traits = w_traits,
                                .entered = w_entered,
                                .chose = inner->chose ? w_chose : NULL};
    w->rank = rank;
    w->kind = inj ? dl_inject_active(inj, rank, profile) : DL_INJECT_NONE;
    w->factor = inj ? inj->factor : 1;
    if (w->kind != DL_INJECT_NONE)
        dl_info("rank %d: DLCOMM_INJECT %s applies here", rank, kinds[w->kind]);
}
