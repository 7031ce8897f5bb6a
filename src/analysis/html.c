/* The parts every HTML page shares: the string buffer, the page around a
 * body (one file, nothing fetched: the CSP forbids it), the run's header and
 * profile tables, and a curve's figures with their CI band. */
#include "html.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int grow(dl_buf_t *b, size_t need)
{
    if (b->oom)
        return 0;
    if (b->n + need + 1 <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->n + need + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return 0;
    }
    b->s = s;
    b->cap = cap;
    return 1;
}

void dl_buf_printf(dl_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !grow(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void dl_buf_esc(dl_buf_t *b, const char *s)
{
    for (; s && *s; s++) {
        const char *e = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;"
                      : *s == '"' ? "&quot;" : *s == '\'' ? "&#39;" : NULL;
        if (e)
            dl_buf_printf(b, "%s", e);
        else if (grow(b, 1)) {
            b->s[b->n++] = *s;
            b->s[b->n] = '\0';
        }
    }
}

void dl_buf_free(dl_buf_t *b)
{
    free(b->s);
    memset(b, 0, sizeof(*b));
}

static const char style[] =
    "body{font-family:sans-serif;margin:1.2em auto;max-width:980px;color:#111;line-height:1.35}"
    "h1{font-size:1.4em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}"
    "table{border-collapse:collapse;margin:.5em 0;font-size:.9em}"
    "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
    "td.num{text-align:right;white-space:nowrap}caption{text-align:left;font-weight:bold;padding:2px 0}"
    ".bad,.regression{background:#fdd;font-weight:bold}.warn{background:#fec}"
    ".good{background:#dfd}.verdict{font-size:1.3em;padding:.5em;border:2px solid #444}"
    ".notice{border-left:6px solid #c00;padding:.3em .8em;background:#fee}"
    "figure{margin:1em 0}svg{max-width:100%;height:auto;background:#fff}"
    "svg .pt:hover .mk{stroke-width:4}td.marked{background:#fdd}"
    "details.data summary{cursor:pointer;color:#036}";

void dl_html_begin(dl_buf_t *b, const char *title)
{
    dl_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                     "style-src 'unsafe-inline'\"><meta name=\"viewport\" "
                     "content=\"width=device-width\"><title>");
    dl_buf_esc(b, title);
    dl_buf_printf(b, "</title><style>%s</style></head><body>\n<h1>", style);
    dl_buf_esc(b, title);
    dl_buf_printf(b, "</h1>\n");
}

dl_status_t dl_html_end(dl_buf_t *b, const char *path)
{
    dl_buf_printf(b, "<footer><p><small>Made by dlcomm; one file, nothing loaded from "
                     "elsewhere.</small></p></footer></body></html>\n");
    if (b->oom) {
        dl_err("%s: out of memory making the page", path);
        return DL_ERR_NOMEM;
    }
    return dl_write_atomic(path, b->s, b->n);
}

static void row(dl_buf_t *b, const char *k, const char *v)
{
    if (!v || !v[0])
        return;
    dl_buf_printf(b, "<tr><th scope=\"row\">%s</th><td>", k);
    dl_buf_esc(b, v);
    dl_buf_printf(b, "</td></tr>");
}

/* The recorded environment (allow-listed), one "K=V" after another. */
static void env_row(dl_buf_t *b, const dl_record_t *r)
{
    char env[2048];
    size_t n = 0;
    env[0] = '\0';
    for (size_t i = 0; i < r->nenv && n < sizeof(env); i++)
        if (strcmp(r->env[i].key, "DLCOMM_INJECT") != 0)
            n += (size_t)snprintf(env + n, sizeof(env) - n, "%s%s=%s", n ? " " : "",
                                  r->env[i].key, r->env[i].value);
    row(b, "environment", env);
    const char *inj = dl_an_env(r, "DLCOMM_INJECT");
    if (inj[0]) {
        dl_buf_printf(b, "<tr class=\"warn\" id=\"injected\"><th scope=\"row\">injected fault</th><td>"
                         "DLCOMM_INJECT=");
        dl_buf_esc(b, inj);
        dl_buf_printf(b, " (planted on purpose: these figures are not the hardware's)</td></tr>");
    }
}

void dl_html_run_table(dl_buf_t *b, const dl_record_t *r)
{
    char ranks[192], backend[300];
    dl_an_ranks_text(r, ranks, sizeof(ranks)); /* the one rank count, as every output says it */
    snprintf(backend, sizeof(backend), "%s%s%s%s", r->backend, r->backend_why[0] ? " (" : "",
             r->backend_why, r->backend_why[0] ? ")" : "");
    dl_buf_printf(b, "<table class=\"run\"><caption>The run</caption>");
    row(b, "file", r->path);
    row(b, "format", dl_fmt_name(r->fmt));
    row(b, "started", r->started);
    row(b, "hosts", r->hosts);
    row(b, "ranks", ranks);
    row(b, "backend", r->backend[0] ? backend : "");
    row(b, "GPU", r->gpu);
    row(b, "rank GPUs", r->rank_gpus);
    row(b, "tool", r->tool);
    row(b, "NCCL", r->nccl);
    row(b, "CUDA", r->cuda);
    row(b, "driver", r->driver);
    row(b, "MPI", r->mpi);
    row(b, "kernel", r->kernel);
    env_row(b, r);
    dl_buf_printf(b, "</table>\n");
}

void dl_html_stragglers(dl_buf_t *b, const dl_record_t *r)
{
    if (!r->has_strag)
        return;
    if (!r->nstrag) {
        dl_buf_printf(b, "<p id=\"stragglers\">Stragglers: none (no rank late in half the rows "
                         "or more).</p>\n");
        return;
    }
    dl_buf_printf(b, "<div class=\"notice\" id=\"stragglers\"><p><strong>Stragglers: ranks late "
                     "into the calls in half the rows or more</strong></p><ul>");
    for (size_t i = 0; i < r->nstrag; i++) {
        dl_buf_printf(b, "<li>rank %d (", r->strag[i].rank);
        dl_buf_esc(b, r->strag[i].host);
        dl_buf_printf(b, ") late in %d/%d rows by %.1f us</li>", r->strag[i].rows,
                      r->strag[i].of_rows, r->strag[i].late_us);
    }
    dl_buf_printf(b, "</ul></div>\n");
}

void dl_html_profiles(dl_buf_t *b, const dl_record_t *r)
{
    size_t bad = 0, contra = 0;
    for (size_t i = 0; i < r->nprofs; i++) {
        bad += dl_rec_status_failed(r->profs[i].status);
        contra += r->profs[i].contra[0] != 0;
    }
    if (bad || contra) {
        dl_buf_printf(b, "<div class=\"notice\" id=\"problems\"><p><strong>");
        dl_buf_printf(b, "%zu profile%s did not finish; %zu with transport contradictions",
                      bad, bad == 1 ? "" : "s", contra);
        dl_buf_printf(b, "</strong></p><ul>");
        for (size_t i = 0; i < r->nprofs; i++) {
            const dl_rec_profile_t *p = &r->profs[i];
            int failed = dl_rec_status_failed(p->status);
            if (failed || p->contra[0]) {
                dl_buf_printf(b, "<li class=\"%s\">", failed ? "bad" : "warn");
                dl_buf_esc(b, p->name);
                dl_buf_printf(b, ": ");
                dl_buf_esc(b, failed ? dl_rec_status_name(p->status) : "contradiction");
                dl_buf_printf(b, " ");
                dl_buf_esc(b, failed ? p->reason : p->contra);
                dl_buf_printf(b, "</li>");
            }
        }
        dl_buf_printf(b, "</ul></div>\n");
    }
    dl_buf_printf(b, "<table class=\"profiles\"><caption>Profiles</caption><thead><tr>"
                     "<th>profile</th><th>backend</th><th>status</th><th>reason</th>"
                     "<th>what NCCL used (modelled: what the model assumed; no NCCL ran)</th>"
                     "<th>transport contradictions</th></tr></thead><tbody>");
    for (size_t i = 0; i < r->nprofs; i++) {
        const dl_rec_profile_t *p = &r->profs[i];
        int ok = p->status == DL_REC_OK;
        dl_buf_printf(b, "<tr class=\"%s\"><td>", ok ? "" : p->status != DL_REC_SKIPPED ? "bad" : "warn");
        dl_buf_esc(b, p->name);
        dl_buf_printf(b, "%s</td><td>", p->modelled ? " (modelled)" : "");
        dl_buf_esc(b, p->backend[0] ? p->backend : "-");
        dl_buf_printf(b, "</td><td>");
        dl_buf_esc(b, dl_rec_status_name(p->status));
        dl_buf_printf(b, "</td><td>");
        dl_buf_esc(b, p->reason);
        dl_buf_printf(b, "</td><td>%s", p->modelled && p->used[0] ? "modelled: " : "");
        dl_buf_esc(b, p->used[0] ? p->used : "-");
        dl_buf_printf(b, "</td><td%s>", p->contra[0] ? " class=\"warn\"" : "");
        dl_buf_esc(b, p->contra[0] ? p->contra : "none");
        dl_buf_printf(b, "</td></tr>");
    }
    dl_buf_printf(b, "</tbody></table>\n");
}

dl_status_t dl_html_curve(const dl_curve_t *c, dl_html_curve_t *h)
{
    size_t n = c->n ? c->n : 1;
    double *m = calloc(7 * n, sizeof(double));
    if (!m)
        return DL_ERR_NOMEM;
    double **v[] = {&h->x, &h->bw, &h->bwlo, &h->bwhi, &h->t, &h->tlo, &h->thi};
    for (size_t k = 0; k < 7; k++)
        *v[k] = m + k * n;
    for (size_t i = 0; i < c->n; i++) {
        const dl_row_t *r = c->v[i];
        double t = r->time_us, ci = dl_an_spread(r), bw = dl_curve_bw(c, i);
        h->x[i] = (double)r->bytes;
        h->bw[i] = bw;
        h->t[i] = t;
        h->tlo[i] = h->thi[i] = h->bwlo[i] = h->bwhi[i] = NAN;
        if (isfinite(ci) && t > 0) { /* bandwidth goes as 1 / time */
            h->tlo[i] = t - ci > 0 ? t - ci : NAN;
            h->thi[i] = t + ci;
            h->bwlo[i] = bw * t / (t + ci);
            h->bwhi[i] = t - ci > 0 ? bw * t / (t - ci) : NAN;
        }
    }
    return DL_OK;
}

void dl_html_curve_free(dl_html_curve_t *h)
{
    free(h->x);
    memset(h, 0, sizeof(*h));
}
