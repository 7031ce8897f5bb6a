/* The tune section of a page (report --tune, or a tune record's own page):
 * the curve's advice beside tune's measured answer, the recommendation
 * with its lines to paste, exposed and communication time per candidate
 * (one line per profile, the recommended ones ringed) and every candidate
 * in a table; all from the figures dl_an_tune_make computed for the text
 * and JSON reports. */
#include "html.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void mib_cell(dl_buf_t *b, double bytes)
{
    dl_buf_printf(b, "<td class=\"num\" data-bytes=\"%.17g\">%.4g MiB</td>", bytes, bytes / 1048576);
}

static void ms_cell(dl_buf_t *b, double us)
{
    if (isfinite(us))
        dl_buf_printf(b, "<td class=\"num\" data-us=\"%.17g\">%.4g</td>", us, us / 1e3);
    else
        dl_buf_printf(b, "<td>-</td>");
}

static void comparison(dl_buf_t *b, const dl_tune_rep_t *t)
{
    dl_buf_printf(b, "<p id=\"tune-comparison\">");
    dl_buf_esc(b, t->line);
    dl_buf_printf(b, "</p>\n");
    if (!t->compared)
        return;
    dl_buf_printf(b, "<table class=\"tunecmp\"><caption>The curve's fusion size beside the measured "
                     "step</caption><thead><tr><th>what</th><th>fusion size</th><th>exposed per step "
                     "(ms)</th><th>from</th></tr></thead><tbody><tr id=\"tune-curve\"><td>the curve's "
                     "HOROVOD_FUSION_THRESHOLD</td>");
    mib_cell(b, (double)t->curve_bytes);
    dl_buf_printf(b, "<td>-</td><td>all-reduce reaches 90%% of its peak (profile ");
    dl_buf_esc(b, t->curve_prof);
    dl_buf_printf(b, ")</td></tr><tr id=\"tune-best\"><td>tune's first choice</td>");
    mib_cell(b, t->best_bytes);
    ms_cell(b, t->best_exp);
    dl_buf_printf(b, "<td>%s</td></tr><tr id=\"tune-nearest\"><td>tune's candidate nearest the "
                     "curve's size</td>", strcmp(t->verdict, "winner") ? "among the best" : "the winner");
    mib_cell(b, t->near_bytes);
    ms_cell(b, t->near_exp);
    dl_buf_printf(b, "<td>measured</td></tr></tbody></table>\n<p class=\"%s\" id=\"tune-agrees\">%s</p>\n",
                  t->agrees ? "good" : "warn",
                  t->agrees ? "The curve's advice agrees with the measurement."
                            : "The curve's advice is not what the measured step prefers: use tune's.");
}

static void recommendation(dl_buf_t *b, const dl_tune_rep_t *t)
{
    int winner = strcmp(t->verdict, "winner") == 0;
    dl_buf_printf(b, "<p class=\"tuneverdict %s\" id=\"tune-verdict\" data-verdict=\"", winner ? "good" : "");
    dl_buf_esc(b, t->verdict);
    dl_buf_printf(b, "\"><strong>Recommendation: %s</strong>%s</p>\n",
                  winner ? "a clear winner" : t->settings ? "any of these" : "none",
                  winner ? " (its lead is larger than the two step times' 95% CIs together)"
                  : t->settings ? " (their exposed times are within the step times' 95% CIs of the best)"
                                : " (nothing measured)");
    int k = 0;
    for (const cJSON *s = t->settings ? t->settings->child : NULL; s; s = s->next, k++) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(s, "profile");
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(s, "exposed_us");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(s, "comm_us");
        const cJSON *lines = cJSON_GetObjectItemCaseSensitive(s, "paste");
        dl_buf_printf(b, "<div class=\"setting\" data-exposed-us=\"%.17g\"><p>profile <strong>",
                      cJSON_IsNumber(e) ? e->valuedouble : NAN);
        dl_buf_esc(b, cJSON_IsString(p) ? p->valuestring : "?");
        dl_buf_printf(b, "</strong>: exposed %.4g ms, communication %.4g ms per step; paste:</p>"
                         "<pre class=\"paste\">", cJSON_IsNumber(e) ? e->valuedouble / 1e3 : NAN,
                      cJSON_IsNumber(c) ? c->valuedouble / 1e3 : NAN);
        for (const cJSON *l = lines ? lines->child : NULL; l; l = l->next)
            if (cJSON_IsString(l)) {
                dl_buf_esc(b, l->valuestring);
                dl_buf_printf(b, "\n");
            }
        dl_buf_printf(b, "</pre></div>\n");
    }
}

/* Exposed (with the step's CI as its band) and communication time per
 * candidate, a line per profile; arrays of ncand per profile. */
static dl_status_t charts(dl_buf_t *b, const dl_tune_rep_t *t)
{
    size_t n = t->nx ? t->nx : 1, np = t->nprofs;
    double *m = calloc(5 * n * (np ? np : 1), sizeof(double));
    int *mark = calloc(n * (np ? np : 1), sizeof(int));
    dl_series_t *ex = calloc(np + 1, sizeof(*ex)), *cm = calloc(np + 1, sizeof(*cm));
    if (!m || !mark || !ex || !cm) {
        free(m), free(mark), free(ex), free(cm);
        return DL_ERR_NOMEM;
    }
    for (size_t k = 0; k < np; k++) {
        double *x = m + 5 * n * k, *e = x + n, *lo = e + n, *hi = lo + n, *c = hi + n;
        for (size_t i = 0; i < n; i++)
            x[i] = (double)i, e[i] = lo[i] = hi[i] = c[i] = NAN;
        for (size_t i = 0; i < t->ncand; i++) {
            const dl_tune_cand_t *d = &t->cand[i];
            if (d->prof != k)
                continue;
            e[d->x] = d->exposed_us / 1e3;
            c[d->x] = d->comm_us / 1e3;
            if (isfinite(d->ci_us)) {
                lo[d->x] = fmax(0, d->exposed_us - d->ci_us) / 1e3;
                hi[d->x] = (d->exposed_us + d->ci_us) / 1e3;
            }
            mark[n * k + d->x] = d->recommended;
        }
        ex[k] = (dl_series_t){t->profs[k], n, x, e, lo, hi, mark + n * k};
        cm[k] = (dl_series_t){t->profs[k], n, x, c, NULL, NULL, mark + n * k};
    }
    char title[256];
    const char *xl = strcmp(t->framework, "horovod") == 0
                         ? "candidate (HOROVOD_FUSION_THRESHOLD MiB / HOROVOD_CYCLE_TIME ms)"
                         : "candidate (bucket_cap_mb, MiB)";
    snprintf(title, sizeof(title), "tune %s, %s: exposed communication per step, by candidate",
             t->model, t->framework);
    dl_chart_t ch = {.id = "tune-exposed", .title = title, .ylabel = "exposed time per step (ms)",
                     .yunit = "ms", .xkind = DL_X_CAT, .xlabel = xl, .xcat = t->xnames,
                     .nxcat = t->nx, .hline = NAN, .s = ex, .ns = np, .marklabel = "recommended"};
    dl_svg_chart(b, &ch);
    snprintf(title, sizeof(title), "tune %s, %s: communication time per step (all calls), by candidate",
             t->model, t->framework);
    ch.id = "tune-comm", ch.title = title, ch.ylabel = "communication time per step (ms)", ch.s = cm;
    dl_svg_chart(b, &ch);
    free(m), free(mark), free(ex), free(cm);
    return DL_OK;
}

static void cand_table(dl_buf_t *b, const dl_tune_rep_t *t)
{
    int curve = 0;
    for (size_t i = 0; i < t->ncand; i++)
        curve |= isfinite(t->cand[i].curve_us);
    dl_buf_printf(b, "<table class=\"tunecands\"><caption>Every candidate: its step measured (95%% CI), "
                     "its calls' time and the part past the backward pass</caption><thead><tr>"
                     "<th>profile</th><th>candidate</th><th>calls</th><th>step (ms)</th><th>CI (ms)</th>"
                     "<th>communication (ms)</th><th>exposed (ms)</th>%s<th>recommended</th></tr>"
                     "</thead><tbody>", curve ? "<th>curve's prediction (ms)</th><th>error</th>" : "");
    for (size_t i = 0; i < t->ncand; i++) {
        const dl_tune_cand_t *c = &t->cand[i];
        dl_buf_printf(b, "<tr%s><td>", c->recommended ? " class=\"good\"" : "");
        dl_buf_esc(b, t->profs[c->prof]);
        dl_buf_printf(b, "</td><td>");
        dl_buf_esc(b, c->label);
        dl_buf_printf(b, "</td><td class=\"num\">%zu</td>", c->calls);
        if (!isfinite(c->step_us)) {
            dl_buf_printf(b, "<td colspan=\"%d\">not measured: the profile ended first</td></tr>",
                          curve ? 7 : 5);
            continue;
        }
        ms_cell(b, c->step_us);
        ms_cell(b, c->ci_us);
        ms_cell(b, c->comm_us);
        ms_cell(b, c->exposed_us);
        if (curve) {
            ms_cell(b, c->curve_us);
            if (isfinite(c->curve_us))
                dl_buf_printf(b, "<td class=\"num\">%+.1f%%</td>",
                              100 * (c->curve_us - c->step_us) / c->step_us);
            else
                dl_buf_printf(b, "<td>-</td>");
        }
        dl_buf_printf(b, "<td>%s</td></tr>", c->recommended ? "yes" : "");
    }
    dl_buf_printf(b, "</tbody></table>\n");
}

dl_status_t dl_html_tune(dl_buf_t *b, const dl_tune_rep_t *t)
{
    dl_buf_printf(b, "<section class=\"tune\" id=\"tune\"><h2>Tune's measured answer</h2>\n<p>Model ");
    dl_buf_esc(b, t->model);
    dl_buf_printf(b, ", framework ");
    dl_buf_esc(b, t->framework);
    dl_buf_printf(b, ", backward pass %.4g ms: each candidate's step of fused all-reduces measured; "
                     "exposed time is how far its last call ends past the backward pass.</p>\n",
                  t->backward_ms);
    const cJSON *ec = cJSON_GetObjectItemCaseSensitive(t->tune, "measurement_exit_code");
    if (cJSON_IsNumber(ec) && ec->valuedouble != 0)
        dl_buf_printf(b, "<div class=\"notice\" id=\"tune-ended\"><p><strong>The measurement ended "
                         "with exit code %g: candidates of profiles that did not finish are not "
                         "measured.</strong></p></div>\n", ec->valuedouble);
    comparison(b, t);
    recommendation(b, t);
    dl_status_t st = t->ncand ? charts(b, t) : DL_OK;
    cand_table(b, t);
    dl_buf_printf(b, "</section>\n");
    return st;
}

dl_status_t dl_an_html_tune(const char *path, const char *file, const dl_tune_rep_t *t)
{
    dl_record_t h;
    memset(&h, 0, sizeof(h));
    snprintf(h.path, sizeof(h.path), "%s", file);
    h.fmt = DL_FMT_TUNE;
    dl_rec_read_header(t->tune, &h);
    dl_buf_t b = {0};
    char title[700];
    snprintf(title, sizeof(title), "dlcomm tune: %s, %s (%s)", t->model, t->framework, file);
    dl_html_begin(&b, title);
    dl_html_run_table(&b, &h);
    dl_status_t st = dl_html_tune(&b, t);
    if (st == DL_OK)
        st = dl_html_end(&b, path);
    dl_buf_free(&b);
    return st;
}
