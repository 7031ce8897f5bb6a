/* A plan as words for the trip to a worker: a sweep's sizes as they are;
 * a step plan as, per step, its call count, then bytes and dtype per call. */
#include "measure.h"

#include <stdlib.h>
#include <string.h>

dl_status_t dl_plan_pack(const dl_plan_t *p, uint64_t **words, size_t *n)
{
    size_t len = p->kind == DL_PLAN_SWEEP ? p->sweep.nsizes : 0;
    for (size_t i = 0; p->kind == DL_PLAN_STEPS && i < p->steps.n; i++)
        len += 1 + 2 * p->steps.v[i].ncalls;
    *n = 0;
    *words = malloc((len ? len : 1) * sizeof(uint64_t));
    if (!*words)
        return DL_ERR_NOMEM;
    if (p->kind == DL_PLAN_SWEEP) {
        memcpy(*words, p->sweep.sizes, len * sizeof(uint64_t));
        *n = len;
        return DL_OK;
    }
    for (size_t i = 0; i < p->steps.n; i++) {
        const dl_step_t *s = &p->steps.v[i];
        (*words)[(*n)++] = s->ncalls;
        for (size_t k = 0; k < s->ncalls; k++) {
            (*words)[(*n)++] = s->calls[k].bytes;
            (*words)[(*n)++] = (uint64_t)s->calls[k].dtype;
        }
    }
    return DL_OK;
}

/* Two passes over the words: count the steps and calls, then fill. */
static dl_status_t unpack_steps(dl_plan_t *p, const uint64_t *w, size_t n, dl_plan_store_t *s)
{
    size_t nsteps = 0, ncalls = 0;
    for (size_t i = 0; i < n; nsteps++) {
        if (w[i] > (n - i - 1) / 2)
            return DL_ERR_COMM;
        ncalls += w[i];
        i += 1 + 2 * w[i];
    }
    s->steps = calloc(nsteps ? nsteps : 1, sizeof(dl_step_t));
    s->calls = calloc(ncalls ? ncalls : 1, sizeof(dl_call_t));
    if (!s->steps || !s->calls)
        return DL_ERR_NOMEM;
    size_t c = 0, i = 0;
    for (size_t k = 0; k < nsteps; k++) {
        size_t m = (size_t)w[i++];
        s->steps[k] = (dl_step_t){.calls = s->calls + c, .ncalls = m};
        for (size_t j = 0; j < m; j++, i += 2) {
            if (w[i + 1] >= DL_DT_COUNT)
                return DL_ERR_COMM;
            s->calls[c++] = (dl_call_t){.bytes = w[i], .dtype = (dl_dtype_t)w[i + 1]};
        }
    }
    p->steps.v = s->steps;
    p->steps.n = nsteps;
    return DL_OK;
}

dl_status_t dl_plan_unpack(dl_plan_t *p, const uint64_t *words, size_t n, dl_plan_store_t *s)
{
    memset(s, 0, sizeof(*s));
    if (p->kind == DL_PLAN_STEPS)
        return unpack_steps(p, words, n, s);
    if (p->kind != DL_PLAN_SWEEP)
        return DL_ERR_COMM;
    s->sizes = malloc((n ? n : 1) * sizeof(uint64_t));
    if (!s->sizes)
        return DL_ERR_NOMEM;
    memcpy(s->sizes, words, n * sizeof(uint64_t));
    p->sweep.sizes = s->sizes;
    p->sweep.nsizes = n;
    return DL_OK;
}

void dl_plan_store_free(dl_plan_store_t *s)
{
    free(s->sizes);
    free(s->steps);
    free(s->calls);
    memset(s, 0, sizeof(*s));
}
