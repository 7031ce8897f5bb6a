/* report: per collective and profile the peak bandwidth, the sizes that
 * reach 50% and 90% of it and the latency floor; the best profile per size
 * band; then advice (report_advice.c). Text for people, JSON (--json) for
 * machines, from the same figures. */
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

static void curve_out(FILE *f, cJSON *arr, const dl_curve_t *c, const char *prof)
{
    char pk[32], s50[32], s90[32], fl[32];
    dl_size_format(c->v[c->peak_i]->bytes, pk, sizeof(pk));
    dl_size_format(c->v[c->i50]->bytes, s50, sizeof(s50));
    dl_size_format(c->v[c->i90]->bytes, s90, sizeof(s90));
    dl_size_format(c->v[c->floor_i]->bytes, fl, sizeof(fl));
    const char *m = c->use_algbw ? "algbw" : "busbw";
    int modelled = c->v[0]->modelled;
    if (f) {
        fprintf(f, "  %-16s %s %9.4g GB/s @ %-9s 50%% at %-9s 90%% at %-9s floor %8.4g us @ %s%s%s\n",
                prof, m, c->peak, pk, s50, s90, c->floor_us, fl,
                c->peak_i == c->n - 1 ? "  (peak at the largest size: may rise further)" : "",
                modelled ? "  (modelled)" : "");
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "profile", prof);
    cJSON_AddStringToObject(o, "metric", m);
    cJSON_AddNumberToObject(o, "peak_gbps", c->peak);
    cJSON_AddNumberToObject(o, "peak_bytes", (double)c->v[c->peak_i]->bytes);
    cJSON_AddNumberToObject(o, "bytes_50pct", (double)c->v[c->i50]->bytes);
    cJSON_AddNumberToObject(o, "bytes_90pct", (double)c->v[c->i90]->bytes);
    cJSON_AddNumberToObject(o, "latency_floor_us", c->floor_us);
    cJSON_AddNumberToObject(o, "latency_floor_bytes", (double)c->v[c->floor_i]->bytes);
    cJSON_AddBoolToObject(o, "peak_at_largest_size", c->peak_i == c->n - 1);
    cJSON_AddBoolToObject(o, "modelled", modelled);
    cJSON_AddItemToArray(arr, o);
}

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

static void bands_out(FILE *f, cJSON *arr, const dl_curve_t *cv, char (*names)[64], size_t nc)
{
    for (size_t b = 0; b < DL_ARRAY_SIZE(bands); b++) {
        int best = -1, second = -1, n = 0;
        double sc[64];
        for (size_t k = 0; k < nc; k++) {
            sc[k] = band_score(cv, nc, k, b, &n);
            if (!isfinite(sc[k]))
                continue;
            if (best < 0 || sc[k] < sc[best])
                second = best, best = (int)k;
            else if (second < 0 || sc[k] < sc[second])
                second = (int)k;
        }
        if (f) {
            fprintf(f, "  best %-16s ", bands[b].name);
            if (best < 0)
                fprintf(f, "no sizes measured in every profile\n");
            else if (second < 0)
                fprintf(f, "%s (the only profile; geo-mean time %.4g us over %d sizes)\n",
                        names[best], sc[best], n);
            else
                fprintf(f, "%s (geo-mean time %.4g us over %d sizes; next %s %.4g us, %.1f%% slower)\n",
                        names[best], sc[best], n, names[second], sc[second],
                        (sc[second] / sc[best] - 1) * 100);
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "band", bands[b].name);
        cJSON_AddNumberToObject(o, "min_bytes", (double)bands[b].lo);
        if (best >= 0) {
            cJSON_AddStringToObject(o, "best", names[best]);
            cJSON_AddNumberToObject(o, "geomean_time_us", sc[best]);
            cJSON_AddNumberToObject(o, "sizes", n);
        }
        cJSON_AddItemToArray(arr, o);
    }
}

static void collective_out(FILE *f, cJSON *arr, const dl_run_t *r, const char *coll)
{
    char profs[64][64];
    dl_curve_t cv[64];
    size_t np = dl_an_names(r, 1, profs, 64), nc = 0;
    char (*names)[64] = profs;
    char kept[64][64];
    for (size_t k = 0; k < np; k++)
        if (dl_curve_get(r, profs[k], coll, &cv[nc]) == DL_OK && cv[nc].n)
            snprintf(kept[nc++], 64, "%s", profs[k]);
        else
            dl_curve_free(&cv[nc]);
    names = kept;
    if (nc == 0)
        return;
    const dl_row_t *r0 = cv[0].v[0];
    cJSON *o = NULL, *curves = NULL, *bandarr = NULL;
    if (f)
        fprintf(f, "\n%s (%s %s, %s, %d ranks)\n", coll, r0->dtype, r0->op,
                dl_an_place_name(r0->placement), r0->ranks);
    else {
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "collective", coll);
        cJSON_AddStringToObject(o, "dtype", r0->dtype);
        cJSON_AddStringToObject(o, "op", r0->op);
        cJSON_AddStringToObject(o, "placement", r0->placement);
        curves = cJSON_AddArrayToObject(o, "profiles");
        bandarr = cJSON_AddArrayToObject(o, "bands");
        cJSON_AddItemToArray(arr, o);
    }
    for (size_t k = 0; k < nc; k++)
        curve_out(f, curves, &cv[k], names[k]);
    bands_out(f, bandarr, cv, names, nc);
    for (size_t k = 0; k < nc; k++)
        dl_curve_free(&cv[k]);
}

static void header_out(FILE *f, cJSON *j, const dl_run_t *r)
{
    char d[512];
    int modelled = 0;
    dl_an_describe(r, d, sizeof(d));
    for (size_t i = 0; i < r->nrows; i++)
        modelled |= r->rows[i].modelled;
    if (f) {
        fprintf(f, "dlcomm report: %s (%s; %s)\n", r->path, dl_fmt_name(r->fmt), d);
        if (modelled)
            fprintf(f, "MODELLED: figures marked (modelled) come from the sim backend's model, "
                       "not from a measurement\n");
        for (size_t i = 0; i < r->nprofs; i++)
            if (strcmp(r->profs[i].status, "ok"))
                fprintf(f, "profile %s: %s%s%s\n", r->profs[i].name, r->profs[i].status,
                        r->profs[i].reason[0] ? ": " : "", r->profs[i].reason);
        return;
    }
    cJSON_AddNumberToObject(j, "schema", 1);
    cJSON_AddStringToObject(j, "path", r->path);
    cJSON_AddStringToObject(j, "format", dl_fmt_name(r->fmt));
    cJSON_AddStringToObject(j, "run", d);
    cJSON_AddBoolToObject(j, "modelled", modelled);
    cJSON *st = cJSON_AddArrayToObject(j, "profiles");
    for (size_t i = 0; i < r->nprofs; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", r->profs[i].name);
        cJSON_AddStringToObject(p, "status", r->profs[i].status);
        cJSON_AddStringToObject(p, "reason", r->profs[i].reason);
        cJSON_AddBoolToObject(p, "modelled", r->profs[i].modelled);
        cJSON_AddItemToArray(st, p);
    }
}

dl_status_t dl_an_report(FILE *f, const dl_run_t *r, const dl_run_t *baseline, int json)
{
    cJSON *j = json ? cJSON_CreateObject() : NULL;
    FILE *tf = json ? NULL : f;
    header_out(tf, j, r);
    char colls[32][64];
    size_t nc = dl_an_names(r, 0, colls, 32);
    cJSON *ca = j ? cJSON_AddArrayToObject(j, "collectives") : NULL;
    for (size_t i = 0; i < nc; i++)
        collective_out(tf, ca, r, colls[i]);
    dl_an_advice(tf, j, r, baseline);
    if (j) {
        char *text = cJSON_Print(j);
        cJSON_Delete(j);
        if (!text)
            return DL_ERR_NOMEM;
        fprintf(f, "%s\n", text);
        free(text);
    }
    return DL_OK;
}
