/* compare --html: the verdict first, the profiles that no longer finish,
 * what differs between the runs' fingerprints (usually the cause), every
 * pair with regressions on top, and per collective a chart of both runs
 * with the regressed sizes ringed; from compare.c's pairs and verdicts. */
#include "html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void fp_row(dl_buf_t *b, const char *what, const char *x, const char *y)
{
    int differ = strcmp(x, y) != 0;
    dl_buf_printf(b, "<tr%s><th scope=\"row\">%s</th><td>", differ ? " class=\"warn\"" : "", what);
    dl_buf_esc(b, x[0] ? x : "-");
    dl_buf_printf(b, "</td><td>");
    dl_buf_esc(b, y[0] ? y : "-");
    dl_buf_printf(b, "</td><td>%s</td></tr>", differ ? "differs" : "");
}

/* Every difference compare found (differ.c), kind by kind. */
static void differences(dl_buf_t *b, const dl_cmp_t *c)
{
    dl_buf_printf(b, "<h2 id=\"fingerprints\">What differs between the runs</h2>");
    if (!c->diffs.n) {
        dl_buf_printf(b, "<p id=\"differences\">Nothing recorded differs: environment, profile "
                         "settings, versions, hosts, GPUs and stragglers are the same.</p>\n");
        return;
    }
    dl_buf_printf(b, "<table class=\"differences\" id=\"differences\"><caption>Differences (often "
                     "the cause)</caption><thead><tr><th>kind</th><th>what</th><th>base</th>"
                     "<th>new</th></tr></thead><tbody>");
    for (size_t i = 0; i < c->diffs.n; i++) {
        const dl_diff_t *d = &c->diffs.v[i];
        dl_buf_printf(b, "<tr class=\"warn\"><td>%s</td><td>", d->kind);
        dl_buf_esc(b, d->what);
        dl_buf_printf(b, "</td><td>");
        dl_buf_esc(b, d->base[0] ? d->base : "(unset)");
        dl_buf_printf(b, "</td><td>");
        dl_buf_esc(b, d->cur[0] ? d->cur : "(unset)");
        dl_buf_printf(b, "</td></tr>");
    }
    dl_buf_printf(b, "</tbody></table>\n");
}

static void fingerprints(dl_buf_t *b, const dl_record_t *x, const dl_record_t *y)
{
    char rx[192], ry[192];
    dl_an_ranks_text(x, rx, sizeof(rx));
    dl_an_ranks_text(y, ry, sizeof(ry));
    dl_buf_printf(b, "<table class=\"fingerprint\"><caption>Fingerprints</caption><thead><tr>"
                     "<th></th><th>base</th><th>new</th><th></th></tr></thead><tbody>");
    fp_row(b, "file", x->path, y->path);
    fp_row(b, "started", x->started, y->started);
    fp_row(b, "hosts", x->hosts, y->hosts);
    fp_row(b, "ranks", rx, ry);
    fp_row(b, "GPU", x->gpu, y->gpu);
    fp_row(b, "driver", x->driver, y->driver);
    fp_row(b, "NCCL", x->nccl, y->nccl);
    fp_row(b, "CUDA", x->cuda, y->cuda);
    fp_row(b, "MPI", x->mpi, y->mpi);
    fp_row(b, "kernel", x->kernel, y->kernel);
    fp_row(b, "tool", x->tool, y->tool);
    dl_buf_printf(b, "</tbody></table>\n");
}

static void verdict(dl_buf_t *b, const dl_cmp_opts_t *o, const dl_cmp_t *c)
{
    int bad = dl_an_cmp_regressed(c);
    char minsz[32];
    dl_size_format(o->min_size, minsz, sizeof(minsz));
    dl_buf_printf(b, "<p class=\"verdict %s\" id=\"verdict\">Verdict: <strong>%s</strong> &mdash; "
                     "%zu regression, %zu improvement, %zu unchanged, %zu noise of %zu pairs compared "
                     "by %s (threshold %.3g%%, sizes &ge; %s, %s)</p>\n",
                  bad ? "regression" : "good", bad ? "regression" : "no regression",
                  c->count[DL_V_REGRESSION], c->count[DL_V_IMPROVEMENT], c->count[DL_V_UNCHANGED],
                  c->count[DL_V_NOISE], c->npairs, dl_an_metric_name(o->metric), o->threshold * 100,
                  minsz, o->use_p50 ? "median call" : "mean call");
    if (c->failures[0]) {
        dl_buf_printf(b, "<p class=\"notice\" id=\"failed\">Profiles that no longer finish: ");
        dl_buf_esc(b, c->failures);
        dl_buf_printf(b, "</p>\n");
    }
    if (c->wrong_profiles[0]) {
        dl_buf_printf(b, "<p class=\"notice\" id=\"wrong\">Profiles that finished with wrong data: ");
        dl_buf_esc(b, c->wrong_profiles);
        dl_buf_printf(b, "</p>\n");
    }
    if (c->wrong_rows)
        dl_buf_printf(b, "<p class=\"notice\">%zu rows of NEW have wrong elements (a correctness "
                         "failure)</p>\n", c->wrong_rows);
    if (c->unknown_spread)
        dl_buf_printf(b, "<p>%zu pairs have no measured spread (nccl-tests keeps none): judged by the "
                         "threshold alone.</p>\n", c->unknown_spread);
    if (c->fallback)
        dl_buf_printf(b, "<p>busbw is 0 in %zu pairs (one rank): compared by time there.</p>\n",
                      c->fallback);
}

/* The library's choice on each side; a change is marked (often the reason
 * for the figure beside it). */
static void choice_cell(dl_buf_t *b, const dl_pair_t *p)
{
    char cb[48], cn[48];
    dl_row_choice_text(p->base, cb, sizeof(cb));
    dl_row_choice_text(p->cur, cn, sizeof(cn));
    dl_buf_printf(b, "<td class=\"choice%s\" data-base=\"", p->choice_changed ? " changed" : "");
    dl_buf_esc(b, cb);
    dl_buf_printf(b, "\" data-new=\"");
    dl_buf_esc(b, cn);
    dl_buf_printf(b, "\">");
    if (p->choice_changed) {
        dl_buf_esc(b, cb);
        dl_buf_printf(b, " &rarr; ");
    }
    dl_buf_esc(b, cn);
    dl_buf_printf(b, "%s</td></tr>", p->choice_changed && p->cur->modelled ? " (modelled)" : "");
}

static void pairs_table(dl_buf_t *b, const dl_cmp_t *c)
{
    size_t nv;
    const dl_pair_t **v = dl_an_cmp_sorted(c, 1, &nv);
    dl_buf_printf(b, "<h2 id=\"pairs\">Every pair, regressions first</h2><table class=\"pairs\">"
                     "<caption>%zu pairs</caption><thead><tr><th>verdict</th><th>profile</th>"
                     "<th>collective</th><th>dtype</th><th>op</th><th>placement</th><th>size</th>"
                     "<th>ranks</th><th>metric</th><th>base</th><th>new</th><th>worse by</th>"
                     "<th>spread (us)</th><th>NCCL chose (base &rarr; new)</th></tr></thead><tbody>",
                  c->npairs);
    for (size_t i = 0; v && i < nv; i++) {
        const dl_pair_t *p = v[i];
        const dl_row_t *r = p->cur;
        char sz[32];
        dl_size_format(r->bytes, sz, sizeof(sz));
        dl_buf_printf(b, "<tr class=\"%s\"><td>%s</td><td>", p->verdict == DL_V_REGRESSION ? "regression"
                      : p->verdict == DL_V_IMPROVEMENT ? "good" : "", dl_verdict_str(p->verdict));
        dl_buf_esc(b, r->profile);
        dl_buf_printf(b, "</td><td>");
        dl_buf_esc(b, r->collective);
        dl_buf_printf(b, "</td><td>");
        dl_buf_esc(b, r->dtype);
        dl_buf_printf(b, "</td><td>");
        dl_buf_esc(b, r->op);
        dl_buf_printf(b, "</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%d</td><td>%s</td>"
                         "<td class=\"num\">%.4g</td><td class=\"num\">%.4g</td><td class=\"num\">%+.1f%%</td>",
                      dl_an_place_name(r->placement), sz, r->ranks, dl_an_metric_name(p->metric), p->vb,
                      p->vn, p->change * 100);
        if (isfinite(p->spread_us))
            dl_buf_printf(b, "<td class=\"num\">%.3g</td>", p->spread_us);
        else
            dl_buf_printf(b, "<td>unknown</td>");
        choice_cell(b, p);
    }
    dl_buf_printf(b, "</tbody></table>\n");
    free(v);
}

/* Whether a pair of this curve's kind at this size regressed. */
/* NEW's rows that regressed, sorted, so that each charted size is one
 * lookup (a scan of every pair for each point made a comparison of a
 * million rows take minutes). Profiles merged: compared without names. */
typedef struct {
    const dl_row_t **v;
    size_t n;
    int merged;
} regs_t;

static int row_cmp_named(const void *a, const void *b)
{
    return dl_an_row_cmp(*(const dl_row_t *const *)a, *(const dl_row_t *const *)b, DL_ROW_PROFILE);
}

static int row_cmp_unnamed(const void *a, const void *b)
{
    return dl_an_row_cmp(*(const dl_row_t *const *)a, *(const dl_row_t *const *)b, 0);
}

static dl_status_t regs_make(const dl_cmp_t *c, regs_t *g)
{
    g->n = 0;
    g->merged = c->profiles_merged;
    if (!(g->v = malloc((c->count[DL_V_REGRESSION] + 1) * sizeof(*g->v))))
        return DL_ERR_NOMEM;
    for (size_t i = 0; i < c->npairs; i++)
        if (c->pairs[i].verdict == DL_V_REGRESSION && g->n < c->count[DL_V_REGRESSION])
            g->v[g->n++] = c->pairs[i].cur;
    qsort(g->v, g->n, sizeof(*g->v), g->merged ? row_cmp_unnamed : row_cmp_named);
    return DL_OK;
}

static int regressed(const regs_t *g, const dl_row_t *row)
{
    return bsearch(&row, g->v, g->n, sizeof(*g->v), g->merged ? row_cmp_unnamed : row_cmp_named) !=
           NULL;
}

typedef struct {
    dl_curve_t cv[2];
    dl_html_curve_t h[2];
    int *mark;
    char name[2][160];
} side_t;

/* One profile's pair of series (base, new) for a collective; 0 when
 * either run lacks it. */
static int sides(const dl_record_t *b, const dl_record_t *n, const regs_t *g, const char *pb,
                 const char *pn, const char *coll, side_t *s)
{
    memset(s, 0, sizeof(*s));
    if (dl_curve_get(b, pb, coll, &s->cv[0]) != DL_OK)
        return 0;
    if (dl_curve_get(n, pn, coll, &s->cv[1]) != DL_OK) {
        dl_curve_free(&s->cv[0]);
        return 0;
    }
    if (dl_html_curve(&s->cv[0], &s->h[0]) != DL_OK || dl_html_curve(&s->cv[1], &s->h[1]) != DL_OK ||
        !(s->mark = calloc(s->cv[1].n + 1, sizeof(int))))
        return -1;
    for (size_t i = 0; i < s->cv[1].n; i++)
        s->mark[i] = regressed(g, s->cv[1].v[i]);
    snprintf(s->name[0], sizeof(s->name[0]), "base %s", pb);
    snprintf(s->name[1], sizeof(s->name[1]), "new %s", pn);
    return 1;
}

static void sides_free(side_t *s)
{
    for (int k = 0; k < 2; k++) {
        dl_curve_free(&s->cv[k]);
        dl_html_curve_free(&s->h[k]);
    }
    free(s->mark);
}

static dl_status_t coll_chart(dl_buf_t *b, const dl_record_t *rb, const dl_record_t *rn,
                              const dl_cmp_opts_t *o, const dl_cmp_t *c, const regs_t *g,
                              const char *coll, int ci)
{
    size_t np, ns = 0, nsd = 0;
    dl_name_t *profs = dl_an_profile_names(rn, &np);
    side_t *sd = calloc(np + 1, sizeof(*sd));
    dl_series_t *sr = calloc(2 * np + 2, sizeof(*sr));
    dl_status_t st = profs && sd && sr ? DL_OK : DL_ERR_NOMEM;
    int by_time = o->metric == DL_M_TIME, algbw = 0;
    for (size_t k = 0; st == DL_OK && k < np; k++) {
        const char *pb = c->profiles_merged ? rb->rows[0].profile : profs[k];
        int got = sides(rb, rn, g, pb, profs[k], coll, &sd[nsd]);
        if (got < 0)
            st = DL_ERR_NOMEM;
        if (got == 0)
            continue;
        side_t *s = &sd[nsd++];
        algbw |= s->cv[1].use_algbw;
        for (int q = 0; q < 2; q++) {
            const dl_html_curve_t *h = &s->h[q];
            sr[ns++] = by_time ? (dl_series_t){s->name[q], s->cv[q].n, h->x, h->t, h->tlo, h->thi,
                                               q ? s->mark : NULL}
                               : (dl_series_t){s->name[q], s->cv[q].n, h->x, h->bw, h->bwlo, h->bwhi,
                                               q ? s->mark : NULL};
        }
    }
    if (st == DL_OK && ns) {
        char id[32], title[256], yl[64];
        const char *m = by_time ? "time per call" : algbw ? "algbw" : "busbw";
        snprintf(id, sizeof(id), "cmp%d", ci);
        snprintf(title, sizeof(title), "%s %s against size, base and new", coll, m);
        snprintf(yl, sizeof(yl), "%s (%s)", m, by_time ? "us" : "GB/s");
        dl_chart_t ch = {.id = id, .title = title, .ylabel = yl, .yunit = by_time ? "us" : "GB/s",
                         .xkind = DL_X_BYTES, .ylog = by_time, .hline = NAN, .s = sr, .ns = ns,
                         .marklabel = "regressed size"};
        dl_buf_printf(b, "<section class=\"collective\"><h2>");
        dl_buf_esc(b, coll);
        dl_buf_printf(b, "</h2>\n");
        dl_svg_chart(b, &ch);
        dl_buf_printf(b, "</section>\n");
    }
    for (size_t k = 0; k < nsd; k++)
        sides_free(&sd[k]);
    free(sd);
    free(sr);
    free(profs);
    return st;
}

dl_status_t dl_an_html_compare(const char *path, const dl_record_t *b, const dl_record_t *n,
                               const dl_cmp_opts_t *o, const dl_cmp_t *c)
{
    dl_buf_t buf = {0};
    char title[1100];
    snprintf(title, sizeof(title), "dlcomm compare: %s against %s", n->path, b->path);
    dl_html_begin(&buf, title);
    verdict(&buf, o, c);
    differences(&buf, c);
    fingerprints(&buf, b, n);
    char colls[32][64];
    size_t nc = dl_an_names(n, 0, colls, 32);
    regs_t g;
    dl_status_t st = regs_make(c, &g);
    for (size_t i = 0; i < nc && st == DL_OK; i++)
        st = coll_chart(&buf, b, n, o, c, &g, colls[i], (int)i);
    free(g.v);
    pairs_table(&buf, c); /* long: after the charts it explains */
    if (st == DL_OK)
        st = dl_html_end(&buf, path);
    dl_buf_free(&buf);
    return st;
}
