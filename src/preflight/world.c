/* The world scope: every collective's correctness, and bandwidth at a few
 * large sizes against a baseline run. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dl_status_t world_init(pf_ctx_t *c, uint64_t max_bytes, pf_be_t *b, dl_xcomm_t *x)
{
    dl_xcomm_mpi_init(x, &c->world);
    return pf_be_open(c, x, max_bytes, b);
}

/* "rank 3 (dlh2): 12, rank 5 (dlh3): 1" and blames those hosts. */
/* The ranks with wrong elements: in the line, in the figures (so the
 * metrics can count the FAIL on their hosts) and in the verdict. */
static void name_wrong(pf_ctx_t *c, const uint64_t *per_rank, cJSON *f, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    cJSON *list = cJSON_AddArrayToObject(f, "wrong_per_rank");
    for (int r = 0; per_rank && r < c->nranks; r++) {
        if (!per_rank[r])
            continue;
        int h = c->lay.host_of[r];
        pf_blame_host(c, h);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", r);
        cJSON_AddStringToObject(e, "host", c->lay.names[h]);
        cJSON_AddNumberToObject(e, "wrong", (double)per_rank[r]);
        cJSON_AddItemToArray(list, e);
        if (n < len)
            n += (size_t)snprintf(buf + n, len - n, "%srank %d (%s): %llu", n ? ", " : "", r,
                                  c->lay.names[h], (unsigned long long)per_rank[r]);
    }
}

static dl_status_t check_one(pf_ctx_t *c, pf_be_t *b, const dl_xcomm_t *x, const dl_coll_t *coll)
{
    dl_measure_opts_t once = {.warmup = 0, .iters = 1, .min_iters = 1, .max_iters = 1,
                              .check = 1, .ci_target = 1, .budget_s = 1};
    uint64_t wrong[2] = {0, 0}, *per_rank = NULL;
    /* Two placements of a check and a call each, within one share. */
    pf_size_t fit;
    dl_status_t fst = pf_fit(c, b, x, coll->id, c->o->check_bytes, 4, 0, &fit);
    if (fst != DL_OK) {
        pf_check(c, DL_PF_FAIL, "correctness", "world", coll->name, NULL,
                 "the collective broke: %s", dl_status_str(fst));
        return fst;
    }
    uint64_t bytes = fit.bytes ? fit.bytes : fit.probe_bytes;
    for (int place = 0; place < 2; place++) {
        dl_case_t cs;
        dl_result_t r;
        dl_case_init(&cs, coll, DL_DT_FLOAT32, DL_OP_SUM, (dl_place_t)place, 0, bytes,
                     c->nranks, c->rank);
        dl_status_t st = dl_measure_case(&b->w.ops, &b->w, x, &once, &cs, &r);
        if (st != DL_OK) {
            dl_result_free(&r);
            free(per_rank);
            char what[64];
            snprintf(what, sizeof(what), "correctness %s", coll->name);
            dl_status_t fs = pf_faults(c, st, what);
            if (fs != DL_ERR_CHECK)
                pf_check(c, DL_PF_FAIL, "correctness", "world", coll->name, NULL,
                         "the collective broke: %s", dl_status_str(st));
            return fs;
        }
        wrong[place] = r.wrong;
        if (c->rank == 0 && r.wrong) {
            if (!per_rank)
                per_rank = calloc((size_t)c->nranks, sizeof(uint64_t));
            for (int k = 0; per_rank && k < c->nranks; k++)
                per_rank[k] += r.wrong_per_rank[k];
        }
        dl_result_free(&r);
    }
    char sz[32], who[1024], note[300], sep[3] = "";
    dl_size_format(bytes, sz, sizeof(sz));
    pf_size_note(&fit, coll->name, note, sizeof(note));
    if (note[0])
        snprintf(sep, sizeof(sep), "; ");
    cJSON *f = cJSON_CreateObject();
    cJSON_AddNumberToObject(f, "bytes", (double)bytes);
    pf_size_json(f, &fit);
    cJSON_AddNumberToObject(f, "wrong_out_of_place", (double)wrong[0]);
    cJSON_AddNumberToObject(f, "wrong_in_place", (double)wrong[1]);
    if (c->o->modelled) {
        pf_check(c, DL_PF_SKIP, "correctness", "world", coll->name, f,
                 "%s: the calls ran, but a model moves no data to check", sz);
    } else if (wrong[0] + wrong[1]) {
        name_wrong(c, per_rank, f, who, sizeof(who));
        pf_check(c, DL_PF_FAIL, "correctness", "world", coll->name, f,
                 "%s float32: %llu wrong elements: %s%s%s", sz,
                 (unsigned long long)(wrong[0] + wrong[1]), who, sep, note);
    } else {
        pf_check(c, DL_PF_PASS, "correctness", "world", coll->name, f,
                 "%s float32 out-of-place and in-place, %d ranks: 0 wrong%s%s", sz, c->nranks,
                 sep, note);
    }
    free(per_rank);
    return DL_OK;
}

dl_status_t pf_correctness(pf_ctx_t *c)
{
    pf_be_t b;
    dl_xcomm_t x;
    dl_status_t st = world_init(c, c->o->check_bytes, &b, &x);
    for (int i = 0; st == DL_OK && i < DL_COLL_COUNT; i++) {
        char step[64];
        snprintf(step, sizeof(step), "correctness %s", dl_colls[i]->name);
        pf_step(step);
        st = check_one(c, &b, &x, dl_colls[i]);
    }
    pf_be_close(c, &b);
    return st;
}

static void judge_bw(pf_ctx_t *c, const dl_result_t *r, const pf_size_t *fit)
{
    char subject[64], sz[32];
    dl_size_format(r->c.counts.bytes, sz, sizeof(sz));
    snprintf(subject, sizeof(subject), "%s", r->c.coll->name);
    cJSON *f = cJSON_CreateObject();
    cJSON_AddNumberToObject(f, "bytes", (double)r->c.counts.bytes);
    cJSON_AddNumberToObject(f, "ranks", r->nranks);
    cJSON_AddNumberToObject(f, "busbw_gbps", r->busbw_gbps);
    cJSON_AddNumberToObject(f, "time_us", r->t.mean * 1e6);
    pf_size_json(f, fit);
    char note[256];
    pf_size_note(fit, r->c.coll->name, note, sizeof(note));
    if (!fit->bytes) { /* too slow to measure within its share: a fault, whatever the baseline */
        pf_check(c, DL_PF_FAIL, "bandwidth", "world", subject, f, "%s", note);
        return;
    }
    char why[160] = "";
    double base = c->o->baseline ? pf_baseline_busbw(c->o->baseline, c->be->name, r->c.coll->name,
                                                     r->c.counts.bytes, r->nranks, why,
                                                     sizeof(why)) : -1;
    const char *against = "baseline";
    if (base < 0 && c->o->model.be) {
        base = pf_model_busbw(&c->o->model, c->lay.nhosts, r->c.coll->id, r->c.counts.bytes);
        against = "modelled";
    }
    if (base < 0) {
        if (why[0])
            cJSON_AddStringToObject(f, "baseline_skipped", why);
        pf_check(c, DL_PF_SKIP, "bandwidth", "world", subject, f,
                 "%s busbw %.3f GB/s%s%s: %s", sz, r->busbw_gbps, note[0] ? "; " : "", note,
                 why[0] ? why
                 : c->o->baseline || c->o->model.be
                     ? "no baseline row at this collective/size/ranks, and no model"
                     : "no --baseline or --system; only the relative checks of the scopes judge");
        return;
    }
    double frac = r->busbw_gbps / base;
    cJSON_AddNumberToObject(f, "baseline_busbw_gbps", base);
    cJSON_AddStringToObject(f, "baseline_kind", against);
    cJSON_AddNumberToObject(f, "fraction", frac);
    cJSON_AddNumberToObject(f, "min_fraction", c->o->min_fraction);
    dl_pf_status_t st = frac >= c->o->min_fraction ? DL_PF_PASS : DL_PF_FAIL;
    pf_check(c, st, "bandwidth", "world", subject, f,
             "%s busbw %.3f GB/s = %.0f%% of %s %.3f GB/s (needs >= %.0f%%)%s%s", sz,
             r->busbw_gbps, 100 * frac, against, base, 100 * c->o->min_fraction,
             note[0] ? "; " : "", note);
}

dl_status_t pf_bandwidth(pf_ctx_t *c)
{
    static const dl_coll_id_t colls[] = {DL_COLL_ALLREDUCE, DL_COLL_ALLGATHER};
    uint64_t max = 0;
    for (size_t s = 0; s < c->o->nsizes; s++)
        max = c->o->sizes[s] > max ? c->o->sizes[s] : max;
    pf_be_t b;
    dl_xcomm_t x;
    dl_status_t st = world_init(c, max, &b, &x);
    c->arrivals = 1; /* each rank's arrival, for the per-rank judgement after */
    for (size_t k = 0; st == DL_OK && k < DL_ARRAY_SIZE(colls); k++)
        for (size_t s = 0; st == DL_OK && s < c->o->nsizes; s++) {
            dl_result_t r;
            pf_size_t sz;
            pf_step("bandwidth world");
            st = pf_measure_sized(c, &b, &x, colls[k], c->o->sizes[s], &r, &sz);
            if (st == DL_OK) {
                judge_bw(c, &r, &sz);
                pf_ranks_add(c, &r);
            } else {
                st = pf_faults(c, st, "bandwidth world");
            }
            dl_result_free(&r);
        }
    c->arrivals = 0;
    pf_be_close(c, &b);
    if (st == DL_OK)
        st = pf_ranks(c);
    return st;
}
