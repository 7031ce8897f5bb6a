/* Inline SVG charts: x by size on a log-2 axis (or by date), y linear or
 * log, one line per series with its own colour, dash and marker shape (so a
 * greyscale print still tells them apart), the CI band behind it, points
 * whose <title> shows their figures on hover (no script), and a <table> of
 * the same figures after the chart. */
#include "html.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define W 760
#define H 340
#define ML 78  /* margins: left (y labels), right (legend), top, bottom */
#define MR 190
#define MT 34
#define MB 52

/* Okabe-Ito (its yellow, too faint on white, made grey): told apart by
 * people with colour-vision deficiencies. */
static const char *const colours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#000000", "#777777"};
static const char *const dashes[] = {"", "7 3", "2 2", "9 3 2 3", "4 4", "1 3", "12 4", "5 2 1 2"};
#define NSTYLE 8

typedef struct {
    double x0, x1, y0, y1; /* data range (log10/log2 already applied) */
    int ylog;
    dl_xkind_t xkind;
} axes_t;

static double tx(const axes_t *a, double x)
{
    double v = a->xkind == DL_X_BYTES ? log2(x > 0 ? x : 1) : x;
    return ML + (a->x1 > a->x0 ? (v - a->x0) / (a->x1 - a->x0) : 0.5) * (W - ML - MR);
}

static double ty(const axes_t *a, double y)
{
    double v = a->ylog ? log10(y > 0 ? y : 1e-300) : y;
    if (v < a->y0)
        v = a->y0;
    return H - MB - (a->y1 > a->y0 ? (v - a->y0) / (a->y1 - a->y0) : 0.5) * (H - MT - MB);
}

/* A marker of shape k (circle, square, triangle, diamond, cross, plus,
 * down-triangle, bar) centred at (x, y), in the series' colour. */
static void marker(dl_buf_t *b, int k, double x, double y, const char *col, const char *cls)
{
    const double r = 4;
    dl_buf_printf(b, "<path class=\"%s\" fill=\"%s\" stroke=\"%s\" d=\"", cls,
                  k == 4 || k == 5 ? "none" : col, col);
    switch (k % NSTYLE) {
    case 0: dl_buf_printf(b, "M%.1f %.1fa%g %g 0 1 0 %g 0a%g %g 0 1 0 %g 0", x - r, y, r, r, 2 * r, r, r, -2 * r); break;
    case 1: dl_buf_printf(b, "M%.1f %.1fh%gv%gh%gz", x - r, y - r, 2 * r, 2 * r, -2 * r); break;
    case 2: dl_buf_printf(b, "M%.1f %.1fl%g %gh%gz", x, y - r - 1, r + 1, 2 * r + 1, -2 * r - 2); break;
    case 3: dl_buf_printf(b, "M%.1f %.1fl%g %gl%g %gl%g %gz", x, y - r - 1, r + 1, r + 1, -r - 1, r + 1, -r - 1, -r - 1); break;
    case 4: dl_buf_printf(b, "M%.1f %.1fl%g %gm0 %gl%g %g", x - r, y - r, 2 * r, 2 * r, -2 * r, -2 * r, 2 * r); break;
    case 5: dl_buf_printf(b, "M%.1f %.1fh%gm%g %gv%g", x - r - 1, y, 2 * r + 2, -r - 1, -r - 1, 2 * r + 2); break;
    case 6: dl_buf_printf(b, "M%.1f %.1fl%g %gh%gz", x, y + r + 1, r + 1, -2 * r - 1, -2 * r - 2); break;
    default: dl_buf_printf(b, "M%.1f %.1fh%gv%gh%gz", x - r - 1, y - 2, 2 * r + 2, 4.0, -2 * r - 2); break;
    }
    dl_buf_printf(b, "\" stroke-width=\"%s\"/>", k == 4 || k == 5 ? "2" : "1");
}

static void xfmt(const dl_chart_t *c, dl_xkind_t k, double x, char *buf, size_t len)
{
    if (k == DL_X_CAT) {
        size_t i = x >= 0 ? (size_t)x : 0;
        snprintf(buf, len, "%s", c->xcat && i < c->nxcat ? c->xcat[i] : "?");
        return;
    }
    if (k == DL_X_BYTES) {
        dl_size_format((uint64_t)x, buf, len);
        return;
    }
    time_t t = (time_t)x;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
}

static void range(const dl_chart_t *c, axes_t *a)
{
    a->x0 = a->y0 = INFINITY;
    a->x1 = a->y1 = -INFINITY;
    a->ylog = c->ylog;
    a->xkind = c->xkind;
    for (size_t s = 0; s < c->ns; s++)
        for (size_t i = 0; i < c->s[s].n; i++) {
            double x = c->s[s].x[i], y = c->s[s].y[i];
            if (!isfinite(y) || (c->ylog && y <= 0))
                continue;
            double vx = c->xkind == DL_X_BYTES ? log2(x > 0 ? x : 1) : x;
            double lo = c->s[s].lo && isfinite(c->s[s].lo[i]) ? c->s[s].lo[i] : y;
            double hi = c->s[s].hi && isfinite(c->s[s].hi[i]) ? c->s[s].hi[i] : y;
            if (c->ylog && lo <= 0)
                lo = y;
            double vlo = c->ylog ? log10(lo) : lo, vhi = c->ylog ? log10(hi) : hi;
            a->x0 = fmin(a->x0, vx), a->x1 = fmax(a->x1, vx);
            a->y0 = fmin(a->y0, vlo), a->y1 = fmax(a->y1, vhi);
        }
    if (isfinite(c->hline) && c->hline > 0)
        a->y1 = fmax(a->y1, c->ylog ? log10(c->hline) : c->hline);
    if (!isfinite(a->x0))
        a->x0 = 0, a->x1 = 1, a->y0 = 0, a->y1 = 1;
    if (c->ylog) {
        a->y0 = floor(a->y0), a->y1 = ceil(a->y1);
        if (a->y1 <= a->y0)
            a->y1 = a->y0 + 1;
    } else {
        a->y0 = 0;
        a->y1 = a->y1 > 0 ? a->y1 * 1.05 : 1;
    }
    if (c->xkind == DL_X_CAT) /* every name its place, half a step from the edges */
        a->x0 = -0.5, a->x1 = (double)(c->nxcat ? c->nxcat : 1) - 0.5;
    if (a->x1 <= a->x0)
        a->x0 -= 1, a->x1 += 1;
}

static void axes(dl_buf_t *b, const dl_chart_t *c, const axes_t *a)
{
    dl_buf_printf(b, "<g class=\"axes\" font-size=\"11\">");
    dl_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>",
                  ML, MT, W - ML - MR, H - MT - MB);
    char lab[64];
    if (c->xkind == DL_X_BYTES) {
        int span = (int)(a->x1 - a->x0), step = 1;
        while (span / step > 9)
            step = step < 2 ? 2 : step < 5 ? 5 : step < 10 ? 10 : step * 2;
        for (int e = (int)ceil(a->x0); e <= (int)a->x1; e++) {
            if (e % step)
                continue;
            double x = tx(a, ldexp(1, e));
            dl_size_format((uint64_t)ldexp(1, e), lab, sizeof(lab));
            dl_buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                          "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
                          x, MT, x, H - MB, x, H - MB + 15, lab);
        }
    } else if (c->xkind == DL_X_CAT) {
        size_t step = 1; /* names about 70 px apart at least; the table has them all */
        while (c->nxcat / step > (W - ML - MR) / 70)
            step++;
        for (size_t i = 0; i < c->nxcat; i += step) {
            double x = tx(a, (double)i);
            dl_buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                          "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">",
                          x, MT, x, H - MB, x, H - MB + 15);
            dl_buf_esc(b, c->xcat[i]);
            dl_buf_printf(b, "</text>");
        }
    } else {
        for (int k = 0; k <= 4; k++) {
            double v = a->x0 + (a->x1 - a->x0) * k / 4, x = tx(a, v);
            xfmt(c, DL_X_TIME, v, lab, sizeof(lab));
            if (a->x1 - a->x0 >= 2 * 86400)
                lab[10] = '\0'; /* the date; within two days the time too */
            dl_buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                          "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
                          x, MT, x, H - MB, x, H - MB + 15, lab);
        }
    }
    if (c->ylog) {
        for (int e = (int)a->y0; e <= (int)a->y1; e++) {
            double y = ty(a, pow(10, e));
            dl_buf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                          "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>",
                          ML, y, W - MR, y, ML - 5, y + 4, pow(10, e));
        }
    } else {
        double raw = (a->y1 - a->y0) / 5, mag = pow(10, floor(log10(raw))), st = mag;
        st = raw / mag > 5 ? 10 * mag : raw / mag > 2 ? 5 * mag : raw / mag > 1 ? 2 * mag : mag;
        for (double v = 0; v <= a->y1 + 1e-9; v += st) {
            double y = ty(a, v);
            dl_buf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                          "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>",
                          ML, y, W - MR, y, ML - 5, y + 4, v);
        }
    }
    dl_buf_printf(b, "<text class=\"xlabel\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\">",
                  (ML + W - MR) / 2, H - 12);
    dl_buf_esc(b, c->xlabel ? c->xlabel
                  : c->xkind == DL_X_BYTES ? "message size (bytes, log scale)" : "run started (UTC)");
    dl_buf_printf(b, "</text>");
    dl_buf_printf(b, "<text class=\"ylabel\" transform=\"translate(16 %d) rotate(-90)\" "
                     "text-anchor=\"middle\" font-size=\"12\">", (MT + H - MB) / 2);
    dl_buf_esc(b, c->ylabel);
    dl_buf_printf(b, "%s</text></g>", c->ylog ? " (log scale)" : "");
}

static void point_title(dl_buf_t *b, const dl_chart_t *c, const dl_series_t *s, size_t i)
{
    char xs[64];
    xfmt(c, c->xkind, s->x[i], xs, sizeof(xs));
    dl_buf_printf(b, "<title>");
    dl_buf_esc(b, s->name);
    dl_buf_printf(b, ", ");
    dl_buf_esc(b, xs);
    dl_buf_printf(b, ": %.4g %s", s->y[i], c->yunit);
    if (s->lo && s->hi && isfinite(s->lo[i]) && isfinite(s->hi[i]))
        dl_buf_printf(b, " (95%% CI %.4g - %.4g)", s->lo[i], s->hi[i]);
    if (s->mark && s->mark[i])
        dl_buf_printf(b, "; %s", c->marklabel ? c->marklabel : "marked");
    dl_buf_printf(b, "</title>");
}

static void series(dl_buf_t *b, const dl_chart_t *c, const axes_t *a, size_t k)
{
    const dl_series_t *s = &c->s[k];
    const char *col = colours[k % NSTYLE];
    dl_buf_printf(b, "<g class=\"series\" data-name=\"");
    dl_buf_esc(b, s->name);
    dl_buf_printf(b, "\">");
    if (s->lo && s->hi) { /* the band: hi forward, lo back */
        int any = 0;
        for (size_t i = 0; i < s->n; i++)
            any |= isfinite(s->lo[i]) && isfinite(s->hi[i]) && isfinite(s->y[i]);
        if (any) {
            dl_buf_printf(b, "<path class=\"band\" fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\" d=\"", col);
            int first = 1;
            for (size_t i = 0; i < s->n; i++)
                if (isfinite(s->hi[i]) && isfinite(s->y[i]))
                    dl_buf_printf(b, "%s%.1f %.1f", first ? "M" : "L", tx(a, s->x[i]), ty(a, s->hi[i])), first = 0;
            for (size_t i = s->n; i-- > 0;)
                if (isfinite(s->lo[i]) && isfinite(s->y[i]))
                    dl_buf_printf(b, "L%.1f %.1f", tx(a, s->x[i]), ty(a, s->lo[i]));
            dl_buf_printf(b, "z\"/>");
        }
    }
    dl_buf_printf(b, "<path class=\"line\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" "
                     "stroke-dasharray=\"%s\" d=\"", col, dashes[k % NSTYLE]);
    int first = 1;
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(s->y[i]) && !(c->ylog && s->y[i] <= 0))
            dl_buf_printf(b, "%s%.1f %.1f", first ? "M" : "L", tx(a, s->x[i]), ty(a, s->y[i])), first = 0;
    dl_buf_printf(b, "\"/>");
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(s->y[i]) || (c->ylog && s->y[i] <= 0))
            continue;
        double x = tx(a, s->x[i]), y = ty(a, s->y[i]);
        int m = s->mark && s->mark[i];
        dl_buf_printf(b, "<g class=\"pt%s\" data-x=\"%.17g\" data-y=\"%.17g\">", m ? " marked" : "",
                      s->x[i], s->y[i]);
        point_title(b, c, s, i);
        if (m)
            dl_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"8\" fill=\"none\" stroke=\"#c00\" "
                             "stroke-width=\"2\"/>", x, y);
        marker(b, (int)k, x, y, col, "mk");
        dl_buf_printf(b, "</g>");
    }
    dl_buf_printf(b, "</g>");
}

static void legend(dl_buf_t *b, const dl_chart_t *c)
{
    int y = MT + 6;
    dl_buf_printf(b, "<g class=\"legend\" font-size=\"11\">");
    for (size_t k = 0; k < c->ns; k++, y += 18) {
        int x = W - MR + 12;
        dl_buf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1.6\" "
                         "stroke-dasharray=\"%s\"/>", x, y, x + 30, y, colours[k % NSTYLE], dashes[k % NSTYLE]);
        marker(b, (int)k, x + 15, y, colours[k % NSTYLE], "lg");
        dl_buf_printf(b, "<text x=\"%d\" y=\"%d\">", x + 36, y + 4);
        dl_buf_esc(b, c->s[k].name);
        dl_buf_printf(b, "</text>");
    }
    if (c->marklabel)
        dl_buf_printf(b, "<circle cx=\"%d\" cy=\"%d\" r=\"7\" fill=\"none\" stroke=\"#c00\" stroke-width=\"2\"/>"
                         "<text x=\"%d\" y=\"%d\">%s</text>", W - MR + 27, y, W - MR + 48, y + 4, c->marklabel);
    dl_buf_printf(b, "</g>");
}

static void references(dl_buf_t *b, const dl_chart_t *c, const axes_t *a)
{
    if (isfinite(c->hline) && c->hline > 0) {
        double y = ty(a, c->hline);
        dl_buf_printf(b, "<g class=\"ref\"><title>");
        dl_buf_esc(b, c->hline_label ? c->hline_label : "");
        dl_buf_printf(b, "</title><line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#444\" "
                         "stroke-width=\"1.2\" stroke-dasharray=\"3 3\"/><text x=\"%d\" y=\"%.1f\" "
                         "font-size=\"11\">", ML + 4, y, W - MR, y, ML + 6, y - 4);
        dl_buf_esc(b, c->hline_label ? c->hline_label : "");
        dl_buf_printf(b, "</text></g>");
    }
    for (size_t i = 0; i < c->nv; i++) {
        double x = tx(a, c->vx[i]);
        dl_buf_printf(b, "<g class=\"vmark\"><title>");
        dl_buf_esc(b, c->vlabel[i]);
        dl_buf_printf(b, "</title><line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#7a0\" "
                         "stroke-width=\"2\" stroke-dasharray=\"6 2\"/><text x=\"%.1f\" y=\"%d\" "
                         "font-size=\"10\">", x, MT, x, H - MB, x + 3, MT + 12 + (int)(i % 4) * 12);
        dl_buf_esc(b, c->vlabel[i]);
        dl_buf_printf(b, "</text></g>");
    }
}

#define STRIP_H 18 /* a strip's height under the chart, and the gap above them */
#define STRIP_GAP 8

/* Each strip's runs as boxes under the axis, in the series' colour (every
 * other run darker), the label inside where it fits, in the box's title
 * always. */
static void strips(dl_buf_t *b, const dl_chart_t *c, const axes_t *a)
{
    if (!c->nstrips)
        return;
    dl_buf_printf(b, "<g class=\"strips\" font-size=\"10\"><text x=\"4\" y=\"%d\" "
                     "font-size=\"11\">", H + STRIP_GAP - 1);
    dl_buf_esc(b, c->strip_label ? c->strip_label : "");
    dl_buf_printf(b, "</text>");
    for (size_t k = 0; k < c->nstrips; k++) {
        const dl_strip_t *st = &c->strips[k];
        size_t si = 0;
        while (si < c->ns && strcmp(c->s[si].name, st->name) != 0)
            si++;
        const char *col = colours[si % NSTYLE];
        double y = H + STRIP_GAP + (double)k * STRIP_H;
        dl_buf_printf(b, "<g class=\"strip\" data-name=\"");
        dl_buf_esc(b, st->name);
        dl_buf_printf(b, "\"><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", ML - 5, y + 12);
        dl_buf_esc(b, st->name);
        dl_buf_printf(b, "</text>");
        for (size_t i = 0; i < st->n; i++) {
            /* a run reaches halfway to its neighbours: the switch is between */
            double x0 = i ? (tx(a, st->v[i - 1].hi) + tx(a, st->v[i].lo)) / 2 : tx(a, st->v[i].lo) - 5;
            double x1 = i + 1 < st->n ? (tx(a, st->v[i].hi) + tx(a, st->v[i + 1].lo)) / 2
                                      : tx(a, st->v[i].hi) + 5;
            dl_buf_printf(b, "<g class=\"seg\" data-lo=\"%.17g\" data-hi=\"%.17g\" data-label=\"",
                          st->v[i].lo, st->v[i].hi);
            dl_buf_esc(b, st->v[i].label);
            dl_buf_printf(b, "\"><title>");
            dl_buf_esc(b, st->v[i].title ? st->v[i].title : st->v[i].label);
            dl_buf_printf(b, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                             "fill=\"%s\" fill-opacity=\"%s\" stroke=\"%s\"/>", x0, y,
                          x1 - x0, STRIP_H - 3, col, i % 2 ? "0.30" : "0.12", col);
            if (x1 - x0 >= 6.0 * (double)strlen(st->v[i].label)) {
                dl_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                              (x0 + x1) / 2, y + 11);
                dl_buf_esc(b, st->v[i].label);
                dl_buf_printf(b, "</text>");
            }
            dl_buf_printf(b, "</g>");
        }
        dl_buf_printf(b, "</g>");
    }
    dl_buf_printf(b, "</g>");
}

/* The chart's figures as a table: one row per x, one column per series. */
static void table(dl_buf_t *b, const dl_chart_t *c)
{
    double xs[4096];
    size_t nx = 0;
    for (size_t s = 0; s < c->ns; s++)
        for (size_t i = 0; i < c->s[s].n; i++) {
            size_t j = 0;
            while (j < nx && xs[j] != c->s[s].x[i])
                j++;
            if (j == nx && nx < DL_ARRAY_SIZE(xs))
                xs[nx++] = c->s[s].x[i];
        }
    for (size_t i = 1; i < nx; i++) /* insertion sort: tens of sizes */
        for (size_t j = i; j > 0 && xs[j - 1] > xs[j]; j--) {
            double t = xs[j];
            xs[j] = xs[j - 1], xs[j - 1] = t;
        }
    dl_buf_printf(b, "<details class=\"data\"><summary>the figures of this chart</summary>"
                     "<table class=\"chartdata\" data-chart=\"%s\"><caption>", c->id);
    dl_buf_esc(b, c->title);
    dl_buf_printf(b, " (%s)</caption><thead><tr><th scope=\"col\">%s</th>", c->yunit,
                  c->xkind == DL_X_BYTES ? "size" : c->xkind == DL_X_CAT ? "candidate" : "started (UTC)");
    for (size_t s = 0; s < c->ns; s++) {
        dl_buf_printf(b, "<th scope=\"col\">");
        dl_buf_esc(b, c->s[s].name);
        dl_buf_printf(b, "</th>");
    }
    dl_buf_printf(b, "</tr></thead><tbody>");
    for (size_t j = 0; j < nx; j++) {
        char lab[64];
        xfmt(c, c->xkind, xs[j], lab, sizeof(lab));
        dl_buf_printf(b, "<tr><th scope=\"row\">");
        dl_buf_esc(b, lab);
        dl_buf_printf(b, "</th>");
        for (size_t s = 0; s < c->ns; s++) {
            const dl_series_t *sr = &c->s[s];
            size_t i = 0;
            while (i < sr->n && sr->x[i] != xs[j])
                i++;
            if (i == sr->n || !isfinite(sr->y[i])) {
                dl_buf_printf(b, "<td>-</td>");
                continue;
            }
            int m = sr->mark && sr->mark[i];
            dl_buf_printf(b, "<td%s>%.4g", m ? " class=\"marked\"" : "", sr->y[i]);
            if (sr->lo && sr->hi && isfinite(sr->lo[i]) && isfinite(sr->hi[i]))
                dl_buf_printf(b, " <small>(%.4g - %.4g)</small>", sr->lo[i], sr->hi[i]);
            dl_buf_printf(b, "%s</td>", m && c->marklabel ? " !" : "");
        }
        dl_buf_printf(b, "</tr>");
    }
    dl_buf_printf(b, "</tbody></table></details>");
}

void dl_svg_chart(dl_buf_t *b, const dl_chart_t *c)
{
    axes_t a;
    range(c, &a);
    int h = H + (c->nstrips ? STRIP_GAP + (int)c->nstrips * STRIP_H : 0);
    dl_buf_printf(b, "<figure class=\"chart\" id=\"%s\"><svg xmlns=\"http://www.w3.org/2000/svg\" "
                     "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
                     "aria-labelledby=\"%s-t\"><title id=\"%s-t\">", c->id, W, h, W, h, c->id, c->id);
    dl_buf_esc(b, c->title);
    dl_buf_printf(b, "</title><text x=\"%d\" y=\"20\" font-size=\"13\" font-weight=\"bold\">", ML);
    dl_buf_esc(b, c->title);
    dl_buf_printf(b, "</text>");
    axes(b, c, &a);
    references(b, c, &a);
    for (size_t k = 0; k < c->ns; k++)
        series(b, c, &a, k);
    legend(b, c);
    strips(b, c, &a);
    dl_buf_printf(b, "</svg>");
    table(b, c);
    dl_buf_printf(b, "</figure>\n");
}
