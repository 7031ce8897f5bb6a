/* report: per collective and profile the peak bandwidth, the sizes that
 * reach 50% and 90% of it and the latency floor; the best profile per size
 * band; then advice (report_advice.c). Computed once (dl_an_report_make),
 * then rendered: text for people, JSON (--json) for machines, HTML
 * (html_report.c) for a browser. */
#include "analysis.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Size bands: latency-bound, in between, bandwidth-bound. */
static const struct {
    const char *name;
    uint64_t lo, hi; /* lo <= bytes < hi */
} bands[] = {
    {"< 64 KiB", 0, 64u << 10},
    {"64 KiB - 16 MiB", 64u << 10, 16u << 20},
    {">= 16 MiB", 16u << 20, UINT64_MAX},
};

size_t dl_an_names(const dl_record_t *r, int profiles, char (*out)[64], size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const char *s = profiles ? r->rows[i].profile : r->rows[i].collective;
        size_t j = 0;
        while (j < n && strcmp(out[j], s))
            j++;
        if (j == n && n < max)
            snprintf(out[n++], 64, "%s", s);
    }
    return n;
}

dl_name_t *dl_an_profile_names(const dl_record_t *r, size_t *n)
{
    size_t cap = 16;
    dl_name_t *v = malloc(cap * sizeof(*v));
    *n = 0;
    for (size_t i = 0; v && i < r->nrows; i++) {
        const char *s = r->rows[i].profile;
        size_t j = *n;
        if (j && !strncmp(v[j - 1], s, 63)) /* a profile's rows come together */
            continue;
        for (j = 0; j < *n && strncmp(v[j], s, 63); j++)
            ;
        if (j < *n)
            continue;
        if (*n == cap) {
            dl_name_t *w = realloc(v, 2 * cap * sizeof(*v));
            if (!w) {
                free(v);
                *n = 0;
                return NULL;
            }
            v = w;
            cap *= 2;
        }
        snprintf(v[(*n)++], sizeof(*v), "%s", s);
    }
    return v;
}

/* ---- computing ---- */

/* Geometric mean of the time over the band's sizes every curve has (so no
 * profile wins by missing its slow sizes); the lowest wins. */
static double band_score(const dl_curve_t *cv, size_t nc, size_t k, size_t b, int *nsizes,
                         double *rel)
{
    double lsum = 0, var = 0;
    int n = 0;
    for (size_t i = 0; i < cv[k].n; i++) {
        uint64_t by = cv[k].v[i]->bytes;
        if (by < bands[b].lo || by >= bands[b].hi)
            continue;
        int everywhere = 1;
        for (size_t j = 0; j < nc && everywhere; j++) {
            int has = 0;
            for (size_t q = 0; q < cv[j].n && !has; q++)
                has = cv[j].v[q]->bytes == by;
            everywhere = has;
        }
        if (everywhere) {
            double e = dl_an_spread(cv[k].v[i]) / cv[k].v[i]->time_us; /* NAN: unknown */
            lsum += log(cv[k].v[i]->time_us);
            var += e * e;
            n++;
        }
    }
    *nsizes = n;
    /* The geometric mean's relative error: its log is the mean of the logs. */
    *rel = n ? sqrt(var) / n : NAN;
    return n ? exp(lsum / n) : NAN;
}

/* A band's best and next inside each other's noise are a tie: the
 * difference of their log scores within the combined 95% half-widths (or,
 * where a spread is unknown, nothing a printed tenth of a percent shows). */
static void band_tie(dl_rep_band_t *o, double rel_best, double rel_second)
{
    if (o->best < 0 || o->second < 0)
        return;
    double d = log(o->sc_second / o->sc_best), noise = sqrt(rel_best * rel_best + rel_second * rel_second);
    o->noise_pct = isfinite(noise) ? 100 * noise : NAN;
    o->tie = isfinite(noise) ? d <= noise : d < 0.0005;
}

static void bands_make(dl_rep_coll_t *rc)
{
    for (size_t b = 0; b < DL_NBANDS; b++) {
        dl_rep_band_t *o = &rc->bands[b];
        *o = (dl_rep_band_t){bands[b].name, bands[b].lo, bands[b].hi, -1, -1, NAN, NAN, 0, 0, NAN};
        double rb = NAN, rs = NAN;
        for (size_t k = 0; k < rc->ncv; k++) {
            int n;
            double rel, sc = band_score(rc->cv, rc->ncv, k, b, &n, &rel);
            if (!isfinite(sc))
                continue;
            o->nsizes = n;
            if (o->best < 0 || sc < o->sc_best) {
                o->second = o->best, o->sc_second = o->sc_best, rs = rb;
                o->best = (int)k, o->sc_best = sc, rb = rel;
            } else if (o->second < 0 || sc < o->sc_second)
                o->second = (int)k, o->sc_second = sc, rs = rel;
        }
        band_tie(o, rb, rs);
    }
}

/* One collective's curves (one per profile that measured it, and with
 * --split one per group of each: the bands then say which group is
 * slower) and bands. */
static dl_status_t coll_make(const dl_record_t *r, const char *coll, dl_rep_coll_t *rc)
{
    size_t np;
    dl_name_t *profs = dl_an_profile_names(r, &np);
    if (!profs)
        return DL_ERR_NOMEM;
    int groups = 0;
    for (size_t i = 0; i < r->nrows; i++)
        groups = r->rows[i].group >= groups ? r->rows[i].group + 1 : groups;
    size_t per = groups > 0 ? (size_t)groups : 1;
    memset(rc, 0, sizeof(*rc));
    snprintf(rc->coll, sizeof(rc->coll), "%s", coll);
    rc->cv = calloc(np * per + 1, sizeof(*rc->cv));
    rc->names = calloc(np * per + 1, sizeof(*rc->names));
    if (!rc->cv || !rc->names) {
        free(profs);
        return DL_ERR_NOMEM;
    }
    for (size_t k = 0; k < np; k++)
        for (int g = groups > 0 ? 0 : -1; g < (groups > 0 ? groups : 0); g++) {
            dl_curve_t *c = &rc->cv[rc->ncv];
            if (dl_curve_get_group(r, profs[k], coll, g, c) == DL_OK && c->n) {
                if (g >= 0)
                    snprintf(rc->names[rc->ncv++], 64, "%.40s group %d", profs[k], g);
                else
                    snprintf(rc->names[rc->ncv++], 64, "%s", profs[k]);
            } else {
                dl_curve_free(c);
            }
        }
    free(profs);
    bands_make(rc);
    return dl_an_choice_make(r, rc);
}

static void coll_free(dl_rep_coll_t *rc)
{
    dl_an_choice_free(rc);
    for (size_t k = 0; k < rc->ncv; k++)
        dl_curve_free(&rc->cv[k]);
    free(rc->cv);
    free(rc->names);
}

dl_status_t dl_an_report_make(const dl_record_t *r, const dl_record_t *baseline, dl_report_t *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < r->nrows; i++)
        out->modelled |= r->rows[i].modelled;
    char colls[32][64];
    size_t nc = dl_an_names(r, 0, colls, 32);
    out->colls = calloc(nc + 1, sizeof(*out->colls));
    if (!out->colls)
        return DL_ERR_NOMEM;
    for (size_t i = 0; i < nc; i++) {
        dl_rep_coll_t *rc = &out->colls[out->ncolls++];
        if (coll_make(r, colls[i], rc) != DL_OK) {
            dl_an_report_free(out);
            return DL_ERR_NOMEM;
        }
        if (rc->ncv == 0)
            coll_free(&out->colls[--out->ncolls]);
    }
    dl_status_t st = dl_an_advice(out, r, baseline);
    if (st != DL_OK)
        dl_an_report_free(out);
    return st;
}

void dl_an_report_free(dl_report_t *rep)
{
    for (size_t i = 0; i < rep->ncolls; i++)
        coll_free(&rep->colls[i]);
    free(rep->colls);
    free(rep->adv);
    memset(rep, 0, sizeof(*rep));
}

/* ---- text ---- */

static void curve_text(FILE *f, const dl_curve_t *c, const char *prof)
{
    char pk[32], s50[32], s90[32], fl[32];
    dl_size_format(c->v[c->peak_i]->bytes, pk, sizeof(pk));
    dl_size_format(c->v[c->i50]->bytes, s50, sizeof(s50));
    dl_size_format(c->v[c->i90]->bytes, s90, sizeof(s90));
    dl_size_format(c->v[c->floor_i]->bytes, fl, sizeof(fl));
    fprintf(f, "  %-16s %s %9.4g GB/s @ %-9s 50%% at %-9s 90%% at %-9s floor %8.4g us @ %s%s%s\n",
            prof, c->use_algbw ? "algbw" : "busbw", c->peak, pk, s50, s90, c->floor_us, fl,
            c->peak_i == c->n - 1 ? "  (peak at the largest size: may rise further)" : "",
            c->v[0]->modelled ? "  (modelled)" : "");
}

static void band_text(FILE *f, const dl_rep_coll_t *rc, const dl_rep_band_t *b)
{
    fprintf(f, "  best %-16s ", b->name);
    if (b->best < 0)
        fprintf(f, "no sizes measured in every profile\n");
    else if (b->second < 0)
        fprintf(f, "%s (the only profile; geo-mean time %.4g us over %d sizes)\n",
                rc->names[b->best], b->sc_best, b->nsizes);
    else if (b->tie)
        fprintf(f, "tie: %s and %s (geo-mean time %.4g and %.4g us over %d sizes: %.1f%% apart, "
                   "inside the noise%s)\n", rc->names[b->best], rc->names[b->second], b->sc_best,
                b->sc_second, b->nsizes, (b->sc_second / b->sc_best - 1) * 100,
                isfinite(b->noise_pct) ? "" : "; no spread known");
    else
        fprintf(f, "%s (geo-mean time %.4g us over %d sizes; next %s %.4g us, %.1f%% slower)\n",
                rc->names[b->best], b->sc_best, b->nsizes, rc->names[b->second], b->sc_second,
                (b->sc_second / b->sc_best - 1) * 100);
}

/* What the run recorded beside its rows: a fault injected on purpose, the
 * environment (NCCL_*, UCX_*, OMPI_MCA_* ...), the stragglers it named. */
static void facts_text(FILE *f, const dl_record_t *r)
{
    const char *inj = dl_an_env(r, "DLCOMM_INJECT");
    if (inj[0])
        fprintf(f, "INJECTED: DLCOMM_INJECT=%s: a fault planted on purpose; these figures are "
                   "not the hardware's\n", inj);
    if (r->gpu[0] || r->rank_gpus[0])
        fprintf(f, "GPUs: %s%s%s\n", r->gpu, r->gpu[0] && r->rank_gpus[0] ? "; " : "", r->rank_gpus);
    size_t shown = 0;
    for (size_t i = 0; i < r->nenv; i++)
        if (strcmp(r->env[i].key, "DLCOMM_INJECT") != 0)
            fprintf(f, "%s%s=%s", shown++ ? ", " : "environment: ", r->env[i].key, r->env[i].value);
    if (shown)
        fprintf(f, "\n");
    if (r->has_strag && !r->nstrag)
        fprintf(f, "stragglers: none\n");
    for (size_t i = 0; i < r->nstrag; i++)
        fprintf(f, "%s rank %d (%s) late in %d/%d rows by %.1f us%s", i ? ";" : "stragglers:",
                r->strag[i].rank, r->strag[i].host, r->strag[i].rows, r->strag[i].of_rows,
                r->strag[i].late_us, i + 1 == r->nstrag ? "\n" : "");
}

static void report_text(FILE *f, const dl_record_t *r, const dl_report_t *rep)
{
    char d[512];
    dl_an_describe(r, d, sizeof(d));
    fprintf(f, "dlcomm report: %s (%s; %s)\n", r->path, dl_fmt_name(r->fmt), d);
    if (rep->modelled)
        fprintf(f, "MODELLED: figures marked (modelled) come from the sim backend's model, "
                   "not from a measurement\n");
    facts_text(f, r);
    for (size_t i = 0; i < r->nprofs; i++)
        if (r->profs[i].status != DL_REC_OK)
            fprintf(f, "profile %s: %s%s%s\n", r->profs[i].name, dl_rec_status_name(r->profs[i].status),
                    r->profs[i].reason[0] ? ": " : "", r->profs[i].reason);
    for (size_t i = 0; i < rep->ncolls; i++) {
        const dl_rep_coll_t *rc = &rep->colls[i];
        const dl_row_t *r0 = rc->cv[0].v[0];
        fprintf(f, "\n%s (%s %s, %s, %d ranks)\n", rc->coll, r0->dtype, r0->op,
                dl_an_place_name(r0->placement), r0->ranks);
        for (size_t k = 0; k < rc->ncv; k++)
            curve_text(f, &rc->cv[k], rc->names[k]);
        for (size_t b = 0; b < DL_NBANDS; b++)
            band_text(f, rc, &rc->bands[b]);
        dl_an_choice_text(f, rc);
    }
    for (size_t i = 0; i < rep->nadv; i++) {
        const dl_advice_t *a = &rep->adv[i];
        if (i == 0 || a->section != rep->adv[i - 1].section)
            fprintf(f, "\n%s\n", a->section == DL_ADV_HOROVOD ? "Horovod" : "NCCL algorithm / protocol");
        if (a->value[0])
            fprintf(f, "  %s=%s\n      # %s\n", a->name, a->value, a->why);
        else
            fprintf(f, "  %s: %s\n", a->name, a->why);
    }
}

/* ---- JSON ---- */

static cJSON *curve_json(const dl_curve_t *c, const char *prof)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "profile", prof);
    if (c->v[0]->group >= 0) /* --split: the curve is this group's */
        cJSON_AddNumberToObject(o, "group", c->v[0]->group);
    cJSON_AddStringToObject(o, "metric", c->use_algbw ? "algbw" : "busbw");
    cJSON_AddNumberToObject(o, "peak_gbps", c->peak);
    cJSON_AddNumberToObject(o, "peak_bytes", (double)c->v[c->peak_i]->bytes);
    cJSON_AddNumberToObject(o, "bytes_50pct", (double)c->v[c->i50]->bytes);
    cJSON_AddNumberToObject(o, "bytes_90pct", (double)c->v[c->i90]->bytes);
    cJSON_AddNumberToObject(o, "latency_floor_us", c->floor_us);
    cJSON_AddNumberToObject(o, "latency_floor_bytes", (double)c->v[c->floor_i]->bytes);
    cJSON_AddBoolToObject(o, "peak_at_largest_size", c->peak_i == c->n - 1);
    cJSON_AddBoolToObject(o, "modelled", c->v[0]->modelled);
    return o;
}

static cJSON *coll_json(const dl_rep_coll_t *rc)
{
    const dl_row_t *r0 = rc->cv[0].v[0];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "collective", rc->coll);
    cJSON_AddStringToObject(o, "dtype", r0->dtype);
    cJSON_AddStringToObject(o, "op", r0->op);
    cJSON_AddStringToObject(o, "placement", r0->placement);
    cJSON *curves = cJSON_AddArrayToObject(o, "profiles");
    for (size_t k = 0; k < rc->ncv; k++)
        cJSON_AddItemToArray(curves, curve_json(&rc->cv[k], rc->names[k]));
    cJSON *ba = cJSON_AddArrayToObject(o, "bands");
    for (size_t b = 0; b < DL_NBANDS; b++) {
        const dl_rep_band_t *band = &rc->bands[b];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "band", band->name);
        cJSON_AddNumberToObject(x, "min_bytes", (double)band->lo);
        if (band->best >= 0) {
            cJSON_AddStringToObject(x, "best", rc->names[band->best]);
            cJSON_AddNumberToObject(x, "geomean_time_us", band->sc_best);
            cJSON_AddNumberToObject(x, "sizes", band->nsizes);
            cJSON_AddBoolToObject(x, "tie", band->tie);
            if (band->second >= 0)
                cJSON_AddStringToObject(x, "next", rc->names[band->second]);
        }
        cJSON_AddItemToArray(ba, x);
    }
    dl_an_choice_json(o, rc);
    return o;
}

static void facts_json(cJSON *j, const dl_record_t *r)
{
    const char *inj = dl_an_env(r, "DLCOMM_INJECT");
    if (inj[0])
        cJSON_AddStringToObject(j, "injected", inj);
    else
        cJSON_AddNullToObject(j, "injected");
    cJSON *env = cJSON_AddObjectToObject(j, "environment");
    for (size_t i = 0; i < r->nenv; i++)
        cJSON_AddStringToObject(env, r->env[i].key, r->env[i].value);
    if (!r->has_strag) {
        cJSON_AddNullToObject(j, "stragglers"); /* not judged (nccl-tests, an older run) */
        return;
    }
    cJSON *a = cJSON_AddArrayToObject(j, "stragglers");
    for (size_t i = 0; i < r->nstrag; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", r->strag[i].rank);
        cJSON_AddStringToObject(e, "host", r->strag[i].host);
        cJSON_AddNumberToObject(e, "rows", r->strag[i].rows);
        cJSON_AddNumberToObject(e, "of_rows", r->strag[i].of_rows);
        cJSON_AddNumberToObject(e, "late_us", r->strag[i].late_us);
        cJSON_AddItemToArray(a, e);
    }
}

static cJSON *report_json(const dl_record_t *r, const dl_report_t *rep)
{
    char d[512];
    dl_an_describe(r, d, sizeof(d));
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "schema", 1);
    cJSON_AddStringToObject(j, "path", r->path);
    cJSON_AddStringToObject(j, "format", dl_fmt_name(r->fmt));
    cJSON_AddStringToObject(j, "run", d);
    cJSON_AddBoolToObject(j, "modelled", rep->modelled);
    cJSON_AddNumberToObject(j, "ranks", dl_an_run_ranks(r));
    cJSON_AddNumberToObject(j, "processes", r->ranks);
    facts_json(j, r);
    cJSON *st = cJSON_AddArrayToObject(j, "profiles");
    for (size_t i = 0; i < r->nprofs; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", r->profs[i].name);
        cJSON_AddStringToObject(p, "status", dl_rec_status_name(r->profs[i].status));
        cJSON_AddStringToObject(p, "reason", r->profs[i].reason);
        cJSON_AddBoolToObject(p, "modelled", r->profs[i].modelled);
        cJSON_AddItemToArray(st, p);
    }
    cJSON *ca = cJSON_AddArrayToObject(j, "collectives");
    for (size_t i = 0; i < rep->ncolls; i++)
        cJSON_AddItemToArray(ca, coll_json(&rep->colls[i]));
    cJSON *aa = cJSON_AddArrayToObject(j, "advice");
    for (size_t i = 0; i < rep->nadv; i++) {
        cJSON *a = cJSON_CreateObject();
        cJSON_AddStringToObject(a, "name", rep->adv[i].name);
        if (rep->adv[i].value[0])
            cJSON_AddStringToObject(a, "value", rep->adv[i].value);
        else
            cJSON_AddNullToObject(a, "value");
        cJSON_AddStringToObject(a, "why", rep->adv[i].why);
        cJSON_AddItemToArray(aa, a);
    }
    return j;
}

dl_status_t dl_an_report(FILE *f, const dl_record_t *r, const dl_record_t *baseline, int json)
{
    dl_report_t rep;
    dl_status_t st = dl_an_report_make(r, baseline, &rep);
    if (st != DL_OK)
        return st;
    if (!json) {
        report_text(f, r, &rep);
        dl_an_report_free(&rep);
        return DL_OK;
    }
    cJSON *j = report_json(r, &rep);
    dl_an_report_free(&rep);
    char *text = j ? cJSON_Print(j) : NULL;
    cJSON_Delete(j);
    if (!text)
        return DL_ERR_NOMEM;
    fprintf(f, "%s\n", text);
    free(text);
    return DL_OK;
}
