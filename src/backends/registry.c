/* The backends this build has, in the order `--backend auto` tries them. */
#include "backends.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
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

/* --backend's words: auto, then the backends built in, in dl_backends' order. */
static const char *const backend_names[] = {
    "auto",
#ifdef DL_HAVE_NCCL
    "nccl",
#endif
    "mpi",
    "sim",
};
_Static_assert(DL_ARRAY_SIZE(backend_names) == DL_ARRAY_SIZE(dl_backends) + 1,
               "a backend name for each backend built in");
const dl_choices_t dl_backend_choices = {
    .noun = "backend", .names = backend_names, .n = (int)DL_ARRAY_SIZE(backend_names),
    .note = "a backend not listed is not built into this dlcomm (see dlcomm version)"};

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

static dl_status_t optset_with(dl_optset_t *s, const dl_opt_t *base, size_t nbase,
                               size_t base_size, const dl_opt_table_t *other)
{
    const dl_opt_t *extra[DL_ARRAY_SIZE(dl_backends) + 1];
    size_t n[DL_ARRAY_SIZE(dl_backends) + 1], size[DL_ARRAY_SIZE(dl_backends) + 1], k;
    for (k = 0; k < dl_backend_count; k++) {
        extra[k] = dl_backends[k]->opts;
        n[k] = dl_backends[k]->nopts;
        size[k] = dl_backends[k]->opts_size;
    }
    if (other) { /* its own struct after the backends', never read */
        extra[k] = other->opts;
        n[k] = other->n;
        size[k++] = other->size;
    }
    return dl_optset_init(s, base, nbase, base_size, extra, n, size, k);
}

dl_status_t dl_backend_optset(dl_optset_t *s, const dl_opt_t *base, size_t nbase, size_t base_size)
{
    return optset_with(s, base, nbase, base_size, NULL);
}

dl_status_t dl_backend_optset_refusing(dl_optset_t *s, const dl_opt_t *base, size_t nbase,
                                       size_t base_size, const dl_opt_table_t *other,
                                       const char *why)
{
    dl_status_t st = optset_with(s, base, nbase, base_size, other);
    /* A row the set took from other lies in other's struct, the last. */
    for (size_t i = 0; st == DL_OK && other && i < s->n; i++)
        if (s->opts[i].offset >= s->offset[dl_backend_count]) {
            s->opts[i].flags |= DL_OPT_FIXED;
            s->opts[i].help = why;
        }
    return st;
}

void *dl_backend_optset_opts(const dl_optset_t *s, const dl_backend_ops_t *be)
{
    for (size_t k = 0; k < dl_backend_count; k++)
        if (dl_backends[k] == be)
            return (char *)s->target + s->offset[k];
    return NULL;
}

const dl_backend_ops_t *dl_backend_model(void)
{
    for (size_t i = 0; i < dl_backend_count; i++)
        if (dl_backend_has(dl_backends[i], DL_CAP_MODELLED) && dl_backends[i]->expect)
            return dl_backends[i];
    return NULL;
}

dl_status_t dl_backend_opts_from(const dl_backend_ops_t *be, const dl_opt_t *cmd_opts,
                                 size_t ncmd, const void *cmd_target, void **opts,
                                 dl_backend_setup_t *setup)
{
    memset(setup, 0, sizeof(*setup));
    *opts = calloc(1, be->opts_size ? be->opts_size : 1);
    if (!*opts)
        return DL_ERR_NOMEM;
    if (dl_opts_defaults(be->opts, be->nopts, *opts) != DL_OK)
        return DL_ERR_INTERNAL;
    dl_opts_share(cmd_opts, ncmd, cmd_target, be->opts, be->nopts, *opts);
    return be->setup ? be->setup(*opts, setup) : DL_OK;
}

void dl_backend_facts_add(const dl_backend_setup_t *s, void *json_obj)
{
    cJSON *f = s->facts[0] ? cJSON_Parse(s->facts) : NULL, *v;
    cJSON_ArrayForEach(v, f)
        cJSON_AddItemToObject(json_obj, v->string, cJSON_Duplicate(v, 1));
    cJSON_Delete(f);
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
