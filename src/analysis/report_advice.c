/* report's advice: Horovod settings and NCCL algorithm/protocol crossovers,
 * each with the figures behind it, as a list every renderer reads. */
#include "analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    dl_report_t *rep;
    dl_adv_section_t section;
    dl_status_t st;
} out_t;

/* One piece of advice: NAME=VALUE with why (value NULL: not judged, why says so). */
static void advise(out_t *o, const char *name, const char *value, const char *why)
{
    dl_report_t *rep = o->rep;
    if (DL_GROW(rep->adv, rep->nadv, rep->advcap, 8) != DL_OK) {
        o->st = DL_ERR_NOMEM;
        return;
    }
    dl_advice_t *a = &rep->adv[rep->nadv++];
    a->section = o->section;
    snprintf(a->name, sizeof(a->name), "%s", name);
    snprintf(a->value, sizeof(a->value), "%s", value ? value : "");
    snprintf(a->why, sizeof(a->why), "%s", why);
}

/* Rows that failed their check give no advice: a profile whose data were
 * wrong, or a curve holding a row with wrong elements. */
static int failed_check(const dl_record_t *r, const char *prof, const dl_curve_t *c)
{
    for (size_t i = 0; i < r->nprofs; i++)
        if (strcmp(r->profs[i].name, prof) == 0 && r->profs[i].status == DL_REC_WRONG)
            return 1;
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i]->wrong > 0)
            return 1;
    return 0;
}

/* Why no all-reduce curve was judged, in the words of what happened. */
static void no_allreduce_why(const dl_record_t *r, char *why, size_t len)
{
    snprintf(why, len, "not judged: no all-reduce in this run");
    for (size_t i = 0; i < r->nrows; i++)
        if (strcmp(r->rows[i].collective, "allreduce") == 0) {
            snprintf(why, len, "not judged: the all-reduce rows failed their check (profile "
                     "%s: wrong elements)", r->rows[i].profile);
            return;
        }
    for (size_t i = 0; i < r->nprofs; i++)
        if (dl_rec_status_failed(r->profs[i].status)) {
            const dl_rec_profile_t *p = &r->profs[i];
            snprintf(why, len, "not judged: nothing was measured (profile %s ended %s%s%.100s)",
                     p->name, dl_rec_status_name(p->status), p->reason[0] ? ": " : "", p->reason);
            return;
        }
}

/* The all-reduce curve of the profile with the highest peak. */
static int best_allreduce(const dl_record_t *r, dl_curve_t *best, char *prof, size_t plen)
{
    size_t np;
    dl_name_t *profs = dl_an_profile_names(r, &np);
    int found = 0;
    for (size_t k = 0; k < np; k++) {
        dl_curve_t c;
        if (dl_curve_get(r, profs[k], "allreduce", &c) != DL_OK)
            continue;
        if (failed_check(r, profs[k], &c)) {
            dl_curve_free(&c);
            continue;
        }
        if (!found || c.peak > best->peak) {
            if (found)
                dl_curve_free(best);
            *best = c;
            snprintf(prof, plen, "%s", profs[k]);
            found = 1;
        } else
            dl_curve_free(&c);
    }
    free(profs);
    return found;
}

/* The curve's fusion threshold: the smallest power of two at or above the
 * size where all-reduce reaches 90% of its peak. */
static uint64_t fusion_threshold(const dl_curve_t *c)
{
    uint64_t thr = 1;
    while (thr < c->v[c->i90]->bytes && thr < (UINT64_C(1) << 62))
        thr <<= 1;
    return thr;
}

uint64_t dl_an_fusion_threshold(const dl_record_t *r, char *prof, size_t plen)
{
    dl_curve_t c;
    if (!best_allreduce(r, &c, prof, plen))
        return 0;
    uint64_t thr = fusion_threshold(&c);
    dl_curve_free(&c);
    return thr;
}

static void horovod_fusion(out_t *o, const dl_curve_t *c, const char *prof)
{
    const dl_row_t *r90 = c->v[c->i90], *pk = c->v[c->peak_i];
    uint64_t thr = fusion_threshold(c);
    char v[64], why[1024], s90[32], spk[32], sthr[32];
    dl_size_format(r90->bytes, s90, sizeof(s90));
    dl_size_format(pk->bytes, spk, sizeof(spk));
    dl_size_format(thr, sthr, sizeof(sthr));
    const char *m = c->use_algbw ? "algbw" : "busbw";
    snprintf(v, sizeof(v), "%llu", (unsigned long long)thr);
    snprintf(why, sizeof(why),
             "%s: the smallest power of two where all-reduce reaches 90%% of its peak %s: "
             "%.4g GB/s at %s vs peak %.4g GB/s at %s (profile %s%s)%s%s", sthr, m,
             dl_curve_bw(c, c->i90), s90, c->peak, spk, prof, r90->modelled ? ", modelled" : "",
             c->peak_i == c->n - 1 ? "; the peak is at the largest size measured: sweep larger "
                                     "sizes (-e) to see where the curve flattens" : "",
             c->use_algbw ? "; busbw is 0 with one rank, so this is algbw of a local copy: "
                            "measure with the job's rank count" : "");
    advise(o, "HOROVOD_FUSION_THRESHOLD", v, why);

    /* Horovod fuses what is ready each cycle. A cycle as long as one fused
     * all-reduce of the threshold keeps the link busy (the next buffer fills
     * while one is on the wire) without holding small tensors longer than
     * one transfer; Horovod takes milliseconds, so round up to 0.1 ms. */
    double t = dl_curve_time_at(c, thr);
    double ms = ceil(t / 100.0) / 10.0;
    if (ms < 0.1)
        ms = 0.1;
    snprintf(v, sizeof(v), "%.1f", ms);
    snprintf(why, sizeof(why),
             "ms: one all-reduce of the fusion threshold (%s) takes %.4g us here (%s); the cycle "
             "is that time rounded up to 0.1 ms (at least 0.1), so one fused buffer fills while "
             "the previous one is on the wire; Horovod's default is 1 ms", sthr, t,
             r90->bytes != thr ? "scaled linearly from the nearest size below"
             : r90->modelled  ? "modelled" : "measured");
    advise(o, "HOROVOD_CYCLE_TIME", v, why);
}

static void horovod_hier(out_t *o, const dl_record_t *r, const dl_curve_t *c, const dl_record_t *base)
{
    char why[768];
    if (r->nhosts <= 1) {
        advise(o, "HOROVOD_HIERARCHICAL_ALLREDUCE", NULL,
               "not judged: this run spans one node (it matters only between nodes)");
        return;
    }
    dl_curve_t bc;
    char bprof[64];
    if (!base || base->nhosts > 1 || !best_allreduce(base, &bc, bprof, sizeof(bprof))) {
        snprintf(why, sizeof(why), "cannot be judged: this run spans %d nodes and there is no "
                 "single-node all-reduce to compare with (pass --baseline RUN of one node)",
                 r->nhosts);
        advise(o, "HOROVOD_HIERARCHICAL_ALLREDUCE", NULL, why);
        return;
    }
    double ratio = c->peak / bc.peak;
    snprintf(why, sizeof(why), "inter-node all-reduce peak %.4g GB/s (%d nodes) is %.0f%% of the "
             "intra-node peak %.4g GB/s (%s, profile %s); hierarchical all-reduce pays off when "
             "it is below 50%%", c->peak, r->nhosts, ratio * 100, bc.peak, base->path, bprof);
    advise(o, "HOROVOD_HIERARCHICAL_ALLREDUCE", ratio < 0.5 ? "1" : "0", why);
    dl_curve_free(&bc);
}

/* The curves of coll of every profile that forces an algorithm (or
 * protocol), however many, each with what it forces: *nc of them in new
 * arrays (caller frees). DL_ERR_NOMEM when they do not fit. */
static dl_status_t forced_curves(const dl_record_t *r, const char *coll, int proto,
                                 dl_curve_t **cv, const char ***key, size_t *nc)
{
    size_t np;
    dl_name_t *profs = dl_an_profile_names(r, &np);
    *nc = 0;
    *cv = calloc(np + 1, sizeof(**cv));
    *key = calloc(np + 1, sizeof(**key));
    if (!profs || !*cv || !*key) {
        free(profs);
        return DL_ERR_NOMEM;
    }
    for (size_t k = 0; k < np; k++)
        for (size_t p = 0; p < r->nprofs; p++) {
            const char *forced = proto ? r->profs[p].proto : r->profs[p].algo;
            if (strcmp(r->profs[p].name, profs[k]) || !forced[0])
                continue;
            if (dl_curve_get(r, profs[k], coll, &(*cv)[*nc]) == DL_OK)
                (*key)[(*nc)++] = forced;
            break;
        }
    free(profs);
    return DL_OK;
}

/* For the profiles that force an algorithm (or protocol), the winner at
 * each size every one of them measured; a change of winner is a crossover. */
static int crossovers(out_t *o, const dl_record_t *r, const char *coll, int proto)
{
    char why[1024];
    dl_curve_t *cv;
    const char **key;
    size_t nc;
    if (forced_curves(r, coll, proto, &cv, &key, &nc) != DL_OK)
        o->st = DL_ERR_NOMEM;
    int distinct = 0;
    for (size_t k = 1; k < nc; k++)
        distinct |= strcmp(key[k], key[0]) != 0;
    size_t len = 0;
    int changes = 0;
    const char *prev = NULL;
    for (size_t i = 0; distinct && i < cv[0].n; i++) {
        uint64_t by = cv[0].v[i]->bytes;
        const char *win = NULL;
        double best = INFINITY;
        for (size_t k = 0; k < nc; k++)
            for (size_t q = 0; q < cv[k].n; q++)
                if (cv[k].v[q]->bytes == by && cv[k].v[q]->time_us < best)
                    best = cv[k].v[q]->time_us, win = key[k];
        if (!win || (prev && !strcmp(prev, win)))
            continue;
        char sz[32];
        dl_size_format(by, sz, sizeof(sz));
        len += (size_t)snprintf(why + len, len < sizeof(why) ? sizeof(why) - len : 0,
                                "%s%s best from %s (%.4g us)", prev ? ", " : "", win, sz, best);
        if (len >= sizeof(why))
            len = sizeof(why) - 1;
        prev = win;
        changes++;
    }
    if (distinct && changes == 1 && len < sizeof(why))
        snprintf(why + len, sizeof(why) - len, " and at every size after: no crossover");
    if (distinct) {
        char name[64];
        snprintf(name, sizeof(name), "%s %s crossover", coll, proto ? "NCCL_PROTO" : "NCCL_ALGO");
        advise(o, name, NULL, why);
    }
    for (size_t k = 0; k < nc; k++)
        dl_curve_free(&cv[k]);
    free(cv);
    free(key);
    return distinct;
}

dl_status_t dl_an_advice(dl_report_t *rep, const dl_record_t *r, const dl_record_t *base)
{
    out_t o = {.rep = rep, .section = DL_ADV_HOROVOD, .st = DL_OK};
    dl_curve_t c;
    char prof[64];
    static const char *const hvd[] = {"HOROVOD_FUSION_THRESHOLD", "HOROVOD_CYCLE_TIME",
                                      "HOROVOD_HIERARCHICAL_ALLREDUCE"};
    if (r->shared_gpu > 1) { /* loopback sockets on one GPU: no training job runs like that */
        for (size_t i = 0; i < DL_ARRAY_SIZE(hvd); i++)
            advise(&o, hvd[i], NULL, "not judged: shared-GPU socket figures (ranks as NCCL hosts "
                   "of their own on one GPU), not a fabric's");
    } else if (best_allreduce(r, &c, prof, sizeof(prof))) {
        horovod_fusion(&o, &c, prof);
        horovod_hier(&o, r, &c, base);
        dl_curve_free(&c);
    } else {
        char why[256];
        no_allreduce_why(r, why, sizeof(why));
        for (size_t i = 0; i < DL_ARRAY_SIZE(hvd); i++)
            advise(&o, hvd[i], NULL, why);
    }
    o.section = DL_ADV_NCCL;
    char colls[32][64];
    size_t nc = dl_an_names(r, 0, colls, 32);
    int any = 0;
    for (size_t i = 0; i < nc; i++)
        any += crossovers(&o, r, colls[i], 0) + crossovers(&o, r, colls[i], 1);
    if (!any)
        advise(&o, "crossovers", NULL, "not judged: no two profiles here force different "
               "NCCL_ALGO or NCCL_PROTO values (run e.g. ring and tree, or ll, ll128 and simple)");
    return o.st;
}
