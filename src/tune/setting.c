/* One tune's setting space: the model loaded, its gradients' ready times,
 * and each candidate setting's buckets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"
#include "../analysis/analysis.h"

#define MIB (1024.0 * 1024.0)

static dl_status_t parse_list(const char *opt, const char *s, int zero_ok, double **out,
                              size_t *n)
{
    *n = 0;
    *out = calloc(strlen(s) + 1, sizeof(double));
    if (!*out)
        return DL_ERR_NOMEM;
    const char *p = s;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || (*end && *end != ',') || !(zero_ok ? v >= 0 : v > 0) || !isfinite(v)) {
            dl_err("--%s: '%s' is not a list of numbers %s", opt, s, zero_ok ? ">= 0" : "> 0");
            free(*out);
            *out = NULL; /* the caller frees what it holds: never twice */
            return DL_ERR_USAGE;
        }
        (*out)[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    if (!*n) {
        dl_err("--%s: an empty list", opt);
        free(*out);
        *out = NULL;
        return DL_ERR_USAGE;
    }
    return DL_OK;
}

static dl_tune_setting_t *cand_new(dl_tune_t *t)
{
    dl_tune_setting_t *c = realloc(t->c, (t->nc + 1) * sizeof(*c));
    if (!c)
        return NULL;
    t->c = c;
    memset(&c[t->nc], 0, sizeof(*c));
    return &c[t->nc++];
}

/* ddp: one candidate per cap; horovod: one per threshold and cycle time. */
static dl_status_t candidates(dl_tune_t *t, const double *a, size_t na, const double *b,
                              size_t nb)
{
    dl_status_t st = DL_OK;
    for (size_t i = 0; st == DL_OK && i < na; i++)
        for (size_t j = 0; st == DL_OK && j < (t->horovod ? nb : 1); j++) {
            dl_tune_setting_t *c = cand_new(t);
            if (!c)
                return DL_ERR_NOMEM;
            if (t->horovod) {
                c->thr_mb = a[i];
                c->cycle_ms = b[j];
                st = dl_bucket_horovod(&t->m, (uint64_t)(a[i] * MIB), b[j] / 1e3, t->ready, &c->bs);
            } else {
                c->cap_mb = a[i];
                const uint64_t lim[2] = {(uint64_t)(t->o.first_mb * MIB), (uint64_t)(a[i] * MIB)};
                st = dl_bucket_ddp(&t->m, lim, 2, t->ready, &c->bs);
            }
        }
    return st;
}

/* The lists read (every one checked, the other framework's too: a typo in
 * one is bad input, never silently unused), then the candidates. */
static dl_status_t build(dl_tune_t *t)
{
    double *a = NULL, *b = NULL, *other = NULL;
    size_t na = 0, nb = 0, nother = 0;
    dl_status_t st = parse_list("fusion-thresholds", t->o.thresholds, 1, t->horovod ? &a : &other,
                                t->horovod ? &na : &nother);
    if (st == DL_OK)
        st = parse_list("bucket-caps", t->o.caps, 0, t->horovod ? &other : &a,
                        t->horovod ? &nother : &na);
    if (st == DL_OK)
        st = parse_list("cycle-times", t->o.cycles, 0, &b, &nb);
    if (st == DL_OK)
        st = candidates(t, a, na, b, nb);
    free(other);
    free(a);
    free(b);
    return st;
}

/* A bad curve is bad input, found before anything runs (no memory to
 * read it: 3, not bad input). */
static dl_status_t curve_check(const char *path)
{
    dl_record_t r;
    dl_status_t lst = dl_an_load(path, &r);
    if (lst != DL_OK)
        return lst == DL_ERR_NOMEM ? lst : DL_ERR_INPUT;
    dl_curve_t cv;
    dl_status_t st = dl_curve_get(&r, r.nprofs ? r.profs[0].name : "", "allreduce", &cv);
    if (st == DL_OK)
        dl_curve_free(&cv);
    dl_record_free(&r);
    if (st != DL_OK) {
        dl_err("--curve %s: no all-reduce rows to predict from", path);
        return DL_ERR_INPUT;
    }
    return DL_OK;
}

dl_status_t dl_tune_prepare(dl_tune_t *t)
{
    /* --dtype and --framework are their rows' choices: the parse took only those. */
    static const dl_dtype_t dts[] = {DL_DT_FLOAT32, DL_DT_FLOAT16, DL_DT_BFLOAT16};
    static const char *const names[] = {"float32", "float16", "bfloat16"};
    dl_dtype_t dt = DL_DT_FLOAT32;
    for (size_t i = 0; i < DL_ARRAY_SIZE(names); i++)
        if (strcmp(t->o.dtype, names[i]) == 0)
            dt = dts[i];
    t->horovod = strcmp(t->o.framework, "horovod") == 0;
    t->backward_s = t->o.backward_ms / 1e3;
    dl_status_t st = t->o.curve ? curve_check(t->o.curve) : DL_OK;
    if (st != DL_OK)
        return st;
    st = dl_model_load(t->o.model, dt, &t->m);
    if (st != DL_OK)
        return st;
    t->ready = calloc(t->m.n, sizeof(double));
    if (!t->ready)
        return DL_ERR_NOMEM;
    dl_ready_times(&t->m, t->backward_s, t->ready);
    return build(t);
}

void dl_tune_free(dl_tune_t *t)
{
    for (size_t i = 0; i < t->nc; i++)
        dl_buckets_free(&t->c[i].bs);
    free(t->c);
    free(t->ready);
    dl_model_free(&t->m);
}

void dl_tune_setting_text(const dl_tune_t *t, const dl_tune_setting_t *c, char *buf, size_t len)
{
    if (t->horovod)
        snprintf(buf, len, "threshold %g MiB, cycle %g ms", c->thr_mb, c->cycle_ms);
    else
        snprintf(buf, len, "bucket_cap_mb %g", c->cap_mb);
}
