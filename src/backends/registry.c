/* The backends this build has, in the order `--backend auto` tries them. */
#include "backends.h"

#include <stdio.h>
#include <string.h>

extern const dl_backend_ops_t dl_backend_mpi;
extern const dl_backend_ops_t dl_backend_sim;
#ifdef DL_HAVE_NCCL
extern const dl_backend_ops_t dl_backend_nccl;
#endif

const dl_backend_ops_t *const dl_backends[] = {
#ifdef DL_HAVE_NCCL
    &dl_backend_nccl,
#endif
    &dl_backend_mpi,
    &dl_backend_sim,
};
const size_t dl_backend_count = DL_ARRAY_SIZE(dl_backends);

const dl_backend_ops_t *dl_backend_find(const char *name)
{
    for (size_t i = 0; i < dl_backend_count; i++)
        if (strcmp(dl_backends[i]->name, name) == 0)
            return dl_backends[i];
    return NULL;
}

const dl_backend_ops_t *dl_backend_choose(const char *name, int say, char *chose, size_t len)
{
    char why[256] = "";
    snprintf(chose, len, "asked for");
    if (strcmp(name, "auto") == 0) { /* a model is never picked for a measurement */
        char passed[384] = "";
        size_t n = 0;
        for (size_t i = 0; i < dl_backend_count; i++) {
            const dl_backend_ops_t *be = dl_backends[i];
            if (dl_backend_has(be, DL_CAP_MODELLED))
                continue;
            why[0] = '\0';
            if (be->probe(why, sizeof(why)) == DL_OK) { /* "auto -> mpi: nccl: no CUDA GPU ..." */
                snprintf(chose, len, "auto -> %s: %s", be->name, n ? passed : "it works here");
                return be;
            }
            if (n < sizeof(passed))
                n += (size_t)snprintf(passed + n, sizeof(passed) - n, "%s%s: %s", n ? "; " : "",
                                      be->name, why);
        }
        return NULL;
    }
    const dl_backend_ops_t *be = dl_backend_find(name);
    if (!be) {
        if (say)
            dl_err("--backend %s: unknown or not built into this dlcomm (see dlcomm version)", name);
        return NULL;
    }
    if (be->probe(why, sizeof(why)) != DL_OK) {
        if (say)
            dl_err("--backend %s: not available here: %s", name, why);
        return NULL;
    }
    return be;
}

const dl_backend_ops_t *dl_backend_pick(const char *name, int say)
{
    char chose[512];
    return dl_backend_choose(name, say, chose, sizeof(chose));
}

void dl_backend_traits(const dl_backend_ops_t *be, void *ctx, int nranks, dl_backend_traits_t *t)
{
    memset(t, 0, sizeof(*t));
    if (be->traits)
        be->traits(ctx, t);
    if (t->bus_ranks < 1)
        t->bus_ranks = nranks;
    if (t->unit_calls < 1)
        t->unit_calls = 1;
}
