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

size_t dl_an_names(const dl_run_t *r, int profiles, char (*out)[64], size_t max)
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

/* ---- computing ---- */

/* Geometric mean of the time over the band's sizes every curve has (so no
 * profile wins by missing its slow sizes); the lowest wins. */
static double band_score(const dl_curve_t *cv, size_t nc, size_t k, size_t b, int *nsizes)
{
    double lsum = 0;
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
            lsum += log(cv[k].v[i]->time_us);
            n++;
        }
    }
    *nsizes = n;
    return n ? exp(lsum / n) : NAN;
}

static void bands_make(dl_rep_coll_t *rc)
{
    for (size_t b = 0; b < DL_NBANDS; b++) {
        dl_rep_band_t *o = &rc->bands[b];
        *o = (dl_rep_band_t){bands[b].name, bands[b].lo, bands[b].hi, -1, -1, NAN, NAN, 0};
        for (size_t k = 0; k < rc->ncv; k++) {
            int n;
            double sc = band_score(rc->cv, rc->ncv, k, b, &n);
            if (!isfinite(sc))
                continue;
            o->nsizes = n;
            if (o->best < 0 || sc < o->sc_best) {
                o->second = o->best, o->sc_second = o->sc_best;
                o->best = (int)k, o->sc_best = sc;
            } else if (o->second < 0 || sc < o->sc_second)
                o->second = (int)k, o->sc_second = sc;
        }
    }
}

/* One collective's curves (one per profile that measured it, and with
 * --split one per group of each: the bands then say which group is
 * slower) and bands. */
static dl_status_t coll_make(const dl_run_t *r, const char *coll, dl_rep_coll_t *rc)
{
    char profs[64][64];
    size_t np = dl_an_names(r, 1, profs, 64);
    int groups = 0;
    for (size_t i = 0; i < r->nrows; i++)
        groups = r->rows[i].group >= groups ? r->rows[i].group + 1 : groups;
    size_t per = groups > 0 ? (size_t)groups : 1;
    memset(rc, 0, sizeof(*rc));
    snprintf(rc->coll, sizeof(rc->coll), "%s", coll);
    rc->cv = calloc(np * per + 1, sizeof(*rc->cv));
    rc->names = calloc(np * per + 1, sizeof(*rc->names));
    if (!rc->cv || !rc->names)
        return DL_ERR_NOMEM;
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
    bands_make(rc);
    return DL_OK;
}

static void coll_free(dl_rep_coll_t *rc)
{
    for (size_t k = 0; k < rc->ncv; k++)
        dl_curve_free(&rc->cv[k]);
    free(rc->cv);
    free(rc->names);
}

dl_status_t dl_an_report_make(const dl_run_t *r, const dl_run_t *baseline, dl_report_t *out)
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
    else
        fprintf(f, "%s (geo-mean time %.4g us over %d sizes; next %s %.4g us, %.1f%% slower)\n",
                rc->names[b->best], b->sc_best, b->nsizes, rc->names[b->second], b->sc_second,
                (b->sc_second / b->sc_best - 1) * 100);
}

static void report_text(FILE *f, const dl_run_t *r, const dl_report_t *rep)
{
    char d[512];
    dl_an_describe(r, d, sizeof(d));
    fprintf(f, "dlcomm report: %s (%s; %s)\n", r->path, dl_fmt_name(r->fmt), d);
    if (rep->modelled)
        fprintf(f, "MODELLED: figures marked (modelled) come from the sim backend's model, "
                   "not from a measurement\n");
    for (size_t i = 0; i < r->nprofs; i++)
        if (strcmp(r->profs[i].status, "ok"))
            fprintf(f, "profile %s: %s%s%s\n", r->profs[i].name, r->profs[i].status,
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
        }
        cJSON_AddItemToArray(ba, x);
    }
    return o;
}

static cJSON *report_json(const dl_run_t *r, const dl_report_t *rep)
{
    char d[512];
    dl_an_describe(r, d, sizeof(d));
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "schema", 1);
    cJSON_AddStringToObject(j, "path", r->path);
    cJSON_AddStringToObject(j, "format", dl_fmt_name(r->fmt));
    cJSON_AddStringToObject(j, "run", d);
    cJSON_AddBoolToObject(j, "modelled", rep->modelled);
    cJSON *st = cJSON_AddArrayToObject(j, "profiles");
    for (size_t i = 0; i < r->nprofs; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", r->profs[i].name);
        cJSON_AddStringToObject(p, "status", r->profs[i].status);
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

dl_status_t dl_an_report(FILE *f, const dl_run_t *r, const dl_run_t *baseline, int json)
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
