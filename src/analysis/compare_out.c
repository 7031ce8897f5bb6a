/* compare's output: the table and summary for people, JSON for machines. */
#include "analysis.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *dl_an_metric_name(dl_metric_t m) { return m == DL_M_BUSBW ? "busbw" : "time"; }
static const char *metric_unit(dl_metric_t m) { return m == DL_M_BUSBW ? "GB/s" : "us"; }

/* Worst first: regressions by change, then the rest by change. */
static int by_worst(const void *a, const void *b)
{
    const dl_pair_t *x = *(const dl_pair_t *const *)a, *y = *(const dl_pair_t *const *)b;
    int rx = x->verdict == DL_V_REGRESSION, ry = y->verdict == DL_V_REGRESSION;
    if (rx != ry)
        return ry - rx;
    return x->change < y->change ? 1 : x->change > y->change ? -1 : 0;
}

static void pair_line(FILE *f, const dl_pair_t *p, int merged)
{
    const dl_row_t *r = p->cur;
    char sz[32], spread[32];
    dl_size_format(r->bytes, sz, sizeof(sz));
    if (isfinite(p->spread_us))
        snprintf(spread, sizeof(spread), "%.3g us", p->spread_us);
    else
        snprintf(spread, sizeof(spread), "unknown");
    char group[24] = "", chose[128] = "";
    if (r->group >= 0)
        snprintf(group, sizeof(group), "  group %d", r->group);
    if (p->choice_changed) { /* beside the figure: often the reason for it */
        char cb[48], cn[48];
        dl_row_choice_text(p->base, cb, sizeof(cb));
        dl_row_choice_text(r, cn, sizeof(cn));
        snprintf(chose, sizeof(chose), "  NCCL chose %s -> %s%s", cb, cn,
                 r->modelled ? " (modelled)" : "");
    }
    fprintf(f, "  %-11s %-14s %-13s %-8s %-6s %-3s %9s %5d  %s %10.4g -> %-10.4g %+7.1f%%  spread %s%s%s\n",
            dl_verdict_str(p->verdict), merged ? "(one each)" : r->profile, r->collective,
            r->dtype, r->op, r->placement, sz, r->ranks, dl_an_metric_name(p->metric), p->vb, p->vn,
            (p->metric == DL_M_BUSBW ? -p->change : p->change) * 100.0, spread, group, chose);
}

/* Why busbw is 0 where compare fell back to time: one rank moves nothing
 * across a bus; with more, the figure was below what the file records
 * (a nccl-tests log prints 0.00 GB/s under 0.005). */
static const char *zero_busbw_why(const dl_cmp_t *c)
{
    for (size_t i = 0; i < c->npairs; i++) {
        const dl_pair_t *p = &c->pairs[i];
        if (p->metric == DL_M_TIME && p->cur->busbw == 0 && p->cur->ranks > 1)
            return "too small for the figures recorded: a nccl-tests log prints 0.00 below "
                   "0.005 GB/s";
    }
    return "one rank: nothing crosses a bus";
}

static void print_header(FILE *f, const dl_record_t *b, const dl_record_t *n, const dl_cmp_t *c)
{
    char db[512], dn[512];
    dl_an_describe(b, db, sizeof(db));
    dl_an_describe(n, dn, sizeof(dn));
    fprintf(f, "base: %s (%s; %s)\nnew:  %s (%s; %s)\n", b->path, dl_fmt_name(b->fmt), db,
            n->path, dl_fmt_name(n->fmt), dn);
    if (c->warnings[0])
        fprintf(f, "warning: the runs differ: %s\n", c->warnings);
    if (c->diffs.n)
        fprintf(f, "\nwhat differs (base -> new; often the cause):\n");
    for (size_t i = 0; i < c->diffs.n; i++) {
        const dl_diff_t *d = &c->diffs.v[i];
        fprintf(f, "  %-11s %-24s %s -> %s\n", d->kind, d->what, d->base[0] ? d->base : "(unset)",
                d->cur[0] ? d->cur : "(unset)");
    }
    if (c->profiles_merged)
        fprintf(f, "note: one profile each with different names (%s, %s): paired as one\n",
                b->rows[0].profile, n->rows[0].profile);
    if (c->failures[0])
        fprintf(f, "regression: profiles that no longer finish: %s\n", c->failures);
    if (c->wrong_profiles[0])
        fprintf(f, "regression: profiles that finished with wrong data: %s\n", c->wrong_profiles);
}

const dl_pair_t **dl_an_cmp_sorted(const dl_cmp_t *c, int all, size_t *nv)
{
    const dl_pair_t **v = malloc((c->npairs + 1) * sizeof(*v));
    *nv = 0;
    for (size_t i = 0; v && i < c->npairs; i++)
        if (all || c->pairs[i].verdict != DL_V_UNCHANGED)
            v[(*nv)++] = &c->pairs[i];
    if (v)
        qsort(v, *nv, sizeof(*v), by_worst);
    return v;
}

void dl_an_cmp_print(FILE *f, const dl_record_t *b, const dl_record_t *n, const dl_cmp_opts_t *o,
                     const dl_cmp_t *c)
{
    print_header(f, b, n, c);
    size_t nv;
    const dl_pair_t **v = dl_an_cmp_sorted(c, 0, &nv);
    if (nv)
        fprintf(f, "\n  %-11s %-14s %-13s %-8s %-6s %-3s %9s %5s  %s\n", "verdict", "profile",
                "collective", "dtype", "op", "pl", "size", "ranks", "metric base -> new change");
    size_t shown = nv < 60 ? nv : 60;
    for (size_t i = 0; i < shown; i++)
        pair_line(f, v[i], c->profiles_merged);
    if (nv > shown)
        fprintf(f, "  ... %zu more (--json FILE has every row)\n", nv - shown);
    char minsz[32];
    dl_size_format(o->min_size, minsz, sizeof(minsz));
    fprintf(f, "\ncompared %zu rows by %s (threshold %.3g%%, sizes >= %s): %zu regression, "
               "%zu improvement, %zu unchanged, %zu noise\n",
            c->npairs, dl_an_metric_name(o->metric), o->threshold * 100, minsz,
            c->count[DL_V_REGRESSION], c->count[DL_V_IMPROVEMENT], c->count[DL_V_UNCHANGED],
            c->count[DL_V_NOISE]);
    if (c->fallback)
        fprintf(f, "note: busbw is 0 in %zu rows (%s); compared by time there\n", c->fallback,
                zero_busbw_why(c));
    if (o->use_p50)
        fprintf(f, "note: judged by the median call (--stat p50)%s\n",
                c->no_p50 ? "; rows without a median (nccl-tests) by the mean" : "");
    if (c->unknown_spread)
        fprintf(f, "note: %zu rows have no measured spread (nccl-tests keeps none): judged by "
                   "the threshold alone, so noise cannot be told from change there\n",
                c->unknown_spread);
    if (c->wrong_rows)
        fprintf(f, "regression: %zu rows of NEW have wrong elements (a correctness failure: "
                   "see wrong_per_rank in its run.json)\n", c->wrong_rows);
    if (c->only_base || c->only_new || c->small)
        fprintf(f, "note: %zu rows only in base, %zu only in new, %zu below --min-size\n",
                c->only_base, c->only_new, c->small);
    for (size_t i = 0; i < nv && i < 5 && v[i]->verdict == DL_V_REGRESSION; i++) {
        const dl_row_t *r = v[i]->cur;
        char sz[32];
        dl_size_format(r->bytes, sz, sizeof(sz));
        char group[24] = "";
        if (r->group >= 0)
            snprintf(group, sizeof(group), " (group %d)", r->group);
        fprintf(f, "worst: %s %s %s %s %s%s, profile %s: %s %.4g -> %.4g %s (%.1f%% worse)\n",
                r->collective, r->dtype, r->op, dl_an_place_name(r->placement), sz, group, r->profile,
                dl_an_metric_name(v[i]->metric), v[i]->vb, v[i]->vn, metric_unit(v[i]->metric),
                v[i]->change * 100);
    }
    free(v);
}

static cJSON *run_obj(const dl_record_t *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", r->path);
    cJSON_AddStringToObject(o, "format", dl_fmt_name(r->fmt));
    cJSON_AddStringToObject(o, "hosts", r->hosts);
    cJSON_AddNumberToObject(o, "ranks", r->ranks);
    cJSON_AddStringToObject(o, "tool", r->tool);
    cJSON_AddStringToObject(o, "nccl_version", r->nccl);
    return o;
}

/* Each side's choice where its row says ("Tree/LL128/8"), and whether it changed. */
static void choice_obj(cJSON *o, const dl_pair_t *p)
{
    const dl_row_t *side[2] = {p->base, p->cur};
    const char *key[2] = {"base_choice", "new_choice"};
    for (int s = 0; s < 2; s++) {
        char t[48];
        dl_row_choice_text(side[s], t, sizeof(t));
        if (strcmp(t, "-") != 0)
            cJSON_AddStringToObject(o, key[s], t);
        else
            cJSON_AddNullToObject(o, key[s]);
    }
    cJSON_AddBoolToObject(o, "choice_changed", p->choice_changed);
}

static cJSON *pair_obj(const dl_pair_t *p)
{
    const dl_row_t *r = p->cur;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "profile", r->profile);
    cJSON_AddStringToObject(o, "base_profile", p->base->profile);
    cJSON_AddStringToObject(o, "collective", r->collective);
    cJSON_AddStringToObject(o, "dtype", r->dtype);
    cJSON_AddStringToObject(o, "op", r->op);
    cJSON_AddStringToObject(o, "placement", r->placement);
    cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
    cJSON_AddNumberToObject(o, "ranks", r->ranks);
    if (r->group >= 0)
        cJSON_AddNumberToObject(o, "group", r->group);
    cJSON_AddStringToObject(o, "metric", dl_an_metric_name(p->metric));
    cJSON_AddNumberToObject(o, "base", p->vb);
    cJSON_AddNumberToObject(o, "new", p->vn);
    cJSON_AddNumberToObject(o, "worse_pct", p->change * 100);
    if (isfinite(p->spread_us))
        cJSON_AddNumberToObject(o, "spread_us", p->spread_us);
    else
        cJSON_AddNullToObject(o, "spread_us");
    cJSON_AddStringToObject(o, "verdict", dl_verdict_str(p->verdict));
    choice_obj(o, p);
    return o;
}

dl_status_t dl_an_cmp_json(const char *path, const dl_record_t *b, const dl_record_t *n,
                           const dl_cmp_opts_t *o, const dl_cmp_t *c)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "schema", 1);
    cJSON_AddItemToObject(doc, "base", run_obj(b));
    cJSON_AddItemToObject(doc, "new", run_obj(n));
    cJSON_AddStringToObject(doc, "metric", dl_an_metric_name(o->metric));
    cJSON_AddNumberToObject(doc, "threshold_pct", o->threshold * 100);
    cJSON_AddNumberToObject(doc, "min_bytes", (double)o->min_size);
    cJSON_AddStringToObject(doc, "stat", o->use_p50 ? "p50" : "mean");
    cJSON_AddStringToObject(doc, "warnings", c->warnings);
    cJSON *dif = cJSON_AddArrayToObject(doc, "differences");
    for (size_t i = 0; i < c->diffs.n; i++) { /* null: not set, or not known, on that side */
        const dl_diff_t *d = &c->diffs.v[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "kind", d->kind);
        cJSON_AddStringToObject(e, "what", d->what);
        if (d->base[0])
            cJSON_AddStringToObject(e, "base", d->base);
        else
            cJSON_AddNullToObject(e, "base");
        if (d->cur[0])
            cJSON_AddStringToObject(e, "new", d->cur);
        else
            cJSON_AddNullToObject(e, "new");
        cJSON_AddItemToArray(dif, e);
    }
    cJSON_AddStringToObject(doc, "failed_profiles", c->failures);
    cJSON_AddStringToObject(doc, "wrong_profiles", c->wrong_profiles);
    cJSON *s = cJSON_AddObjectToObject(doc, "summary");
    for (int v = 0; v <= DL_V_REGRESSION; v++)
        cJSON_AddNumberToObject(s, dl_verdict_str((dl_verdict_t)v), (double)c->count[v]);
    cJSON_AddNumberToObject(s, "compared_by_time_busbw_zero", (double)c->fallback);
    cJSON_AddNumberToObject(s, "unknown_spread", (double)c->unknown_spread);
    cJSON_AddNumberToObject(s, "wrong_rows", (double)c->wrong_rows);
    cJSON_AddNumberToObject(s, "only_base", (double)c->only_base);
    cJSON_AddNumberToObject(s, "only_new", (double)c->only_new);
    cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
    for (size_t i = 0; i < c->npairs; i++)
        cJSON_AddItemToArray(rows, pair_obj(&c->pairs[i]));
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text)
        return DL_ERR_NOMEM;
    dl_status_t st = dl_write_atomic(path, text, strlen(text));
    free(text);
    return st;
}
