/* Internal to analysis: the HTML pages (report, compare, history) and the
 * inline SVG charts they carry. Everything a page shows is in the one file:
 * no script, font or style from elsewhere (a Content-Security-Policy says
 * so to the browser), every string from a run HTML-escaped, every chart
 * with a <title>, axis labels with units, a marker shape and dash per line
 * (readable in greyscale) and a <table> of the same figures behind it. */
#ifndef DL_AN_HTML_H
#define DL_AN_HTML_H

#include "analysis.h"

/* A growing string; oom set once an allocation failed (then it stops). */
typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} dl_buf_t;

void dl_buf_printf(dl_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s with & < > " ' escaped. */
void dl_buf_esc(dl_buf_t *b, const char *s);
void dl_buf_free(dl_buf_t *b);

/* One line of a chart. y NAN: no point there. lo/hi: the CI band (NULL or
 * NAN: none). mark: points to ring (regressed sizes), NULL for none. */
typedef struct {
    const char *name;
    size_t n;
    const double *x, *y, *lo, *hi;
    const int *mark;
} dl_series_t;

/* bytes: log2 axis; time: Unix seconds, dates; categories: x is an index
 * into the chart's xcat names (tune's candidates), evenly spaced. */
typedef enum { DL_X_BYTES, DL_X_TIME, DL_X_CAT } dl_xkind_t;

/* A labelled run of x drawn in a strip under the chart's axis (report: the
 * library's choice along the sizes); title: its hover text. */
typedef struct {
    double lo, hi;
    const char *label, *title;
} dl_strip_seg_t;
typedef struct {
    const char *name; /* the series it belongs to (its colour) */
    const dl_strip_seg_t *v;
    size_t n;
} dl_strip_t;

typedef struct {
    const char *id, *title;
    const char *ylabel; /* with its unit: "busbw (GB/s)" */
    const char *yunit;  /* "GB/s", for the points' titles and the table */
    dl_xkind_t xkind;
    const char *xlabel; /* NULL: by kind ("message size (bytes, log scale)") */
    const char *const *xcat; /* DL_X_CAT: the name of each x */
    size_t nxcat;
    int ylog;
    double hline;       /* a reference level (line rate), NAN: none */
    const char *hline_label;
    const double *vx;   /* marked moments on the x axis (version changes) */
    const char *const *vlabel;
    size_t nv;
    const dl_series_t *s;
    size_t ns;
    const char *marklabel; /* legend text of marked points ("regressed size") */
    const dl_strip_t *strips; /* one strip each under the axis (DL_X_BYTES); NULL: none */
    size_t nstrips;
    const char *strip_label;  /* what the strips are ("NCCL's choice") */
} dl_chart_t;

/* <figure> with the SVG, its caption and the table of its figures. */
void dl_svg_chart(dl_buf_t *b, const dl_chart_t *c);

/* The page around a body: head (title, CSP, style), then the body. */
void dl_html_begin(dl_buf_t *b, const char *title);
/* Ends the page and writes it atomically; one line and DL_ERR_* on failure. */
dl_status_t dl_html_end(dl_buf_t *b, const char *path);
/* The run's header table (hosts, GPU, versions, when). */
void dl_html_run_table(dl_buf_t *b, const dl_record_t *r);
/* The stragglers the run named (nothing when it judged none: nccl-tests). */
void dl_html_stragglers(dl_buf_t *b, const dl_record_t *r);
/* Profiles with status, what NCCL used and contradictions, problems first. */
void dl_html_profiles(dl_buf_t *b, const dl_record_t *r);
/* busbw (or algbw) and time per size of one profile's curve, with the CI
 * band; arrays of c->n (caller frees with dl_html_curve_free). */
typedef struct {
    double *x, *bw, *bwlo, *bwhi, *t, *tlo, *thi;
} dl_html_curve_t;
dl_status_t dl_html_curve(const dl_curve_t *c, dl_html_curve_t *out);
void dl_html_curve_free(dl_html_curve_t *h);
/* The tune section (html_tune.c): comparison, recommendation, charts, table. */
dl_status_t dl_html_tune(dl_buf_t *b, const dl_tune_rep_t *t);

#endif
