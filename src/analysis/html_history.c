/* history --html: per group (hosts, profile) a chart of bandwidth at a few
 * sizes over time, version changes marked on the time axis, the last run's
 * verdict against the one before, and the runs in a table. */
#include "html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void verdict_line(dl_buf_t *b, const dl_hist_run_t *g, size_t n)
{
    if (n < 2) {
        dl_buf_printf(b, "<p class=\"verdict\">One run: nothing to compare with.</p>");
        return;
    }
    dl_hist_verdict_t v;
    if (dl_an_history_verdict(&g[n - 2], &g[n - 1], &v) != DL_OK)
        return;
    if (v.running) {
        dl_buf_printf(b, "<p class=\"verdict\">The last run is still running: not judged until it "
                         "ends.</p>");
        return;
    }
    dl_buf_printf(b, "<p class=\"verdict %s\">Last run against the one before: <strong>%s</strong> "
                     "&mdash; %zu regression, %zu improvement, %zu unchanged, %zu noise of %zu pairs%s%s</p>",
                  v.regressed ? "regression" : "good", v.regressed ? "regression" : "no regression",
                  v.count[DL_V_REGRESSION], v.count[DL_V_IMPROVEMENT], v.count[DL_V_UNCHANGED],
                  v.count[DL_V_NOISE], v.npairs, v.failed ? "; the profile no longer finishes" : "",
                  v.wrong ? "; it finished with wrong data" : "");
}

static void runs_table(dl_buf_t *b, const dl_hist_run_t *g, size_t n)
{
    dl_buf_printf(b, "<details><summary>the %zu runs</summary><table class=\"runs\"><thead><tr>"
                     "<th>started</th><th>file</th><th>NCCL</th><th>CUDA</th><th>driver</th><th>MPI</th>"
                     "<th>status</th><th>changed</th></tr></thead><tbody>", n);
    for (size_t i = 0; i < n; i++) {
        const dl_record_t *r = g[i].run;
        const char *status = "ok";
        for (size_t p = 0; p < r->nprofs; p++)
            if (!strcmp(r->profs[p].name, g[i].profile))
                status = dl_rec_status_name(r->profs[p].status);
        char ch[512] = "";
        if (i)
            dl_an_history_changes(g[i - 1].run, r, ch, sizeof(ch));
        const char *cells[] = {r->started, r->path, r->nccl, r->cuda, r->driver, r->mpi, status, ch};
        dl_buf_printf(b, "<tr%s>", strcmp(status, "ok") ? " class=\"bad\"" : ch[0] ? " class=\"warn\"" : "");
        for (size_t k = 0; k < DL_ARRAY_SIZE(cells); k++) {
            dl_buf_printf(b, "<td>");
            dl_buf_esc(b, cells[k][0] ? cells[k] : "-");
            dl_buf_printf(b, "</td>");
        }
        dl_buf_printf(b, "</tr>");
    }
    dl_buf_printf(b, "</tbody></table></details>\n");
}

static dl_status_t group(dl_buf_t *b, const dl_hist_run_t *g, size_t n, int gi)
{
    const dl_hist_run_t *last = &g[n - 1];
    char coll[64];
    uint64_t sz[3];
    dl_an_history_coll(last, coll, sizeof(coll));
    size_t ns = dl_an_history_sizes(last, coll, sz);
    double *m = calloc((ns + 1) * 2 * n + n + 1, sizeof(double));
    char (*names)[64] = calloc(ns + 1, sizeof(*names));
    char (*labels)[512] = calloc(n + 1, sizeof(*labels));
    const char **lp = calloc(n + 1, sizeof(*lp));
    if (!m || !names || !labels || !lp) {
        free(m), free(names), free(labels), free(lp);
        return DL_ERR_NOMEM;
    }
    double *x = m, *vx = m + n, *y = m + 2 * n;
    dl_series_t sr[3];
    for (size_t i = 0; i < n; i++)
        x[i] = g[i].t;
    for (size_t k = 0; k < ns; k++) {
        char s[32];
        dl_size_format(sz[k], s, sizeof(s));
        snprintf(names[k], 64, "%.30s %.30s", coll, s);
        for (size_t i = 0; i < n; i++) {
            double t;
            y[k * n + i] = dl_an_history_bw(&g[i], coll, sz[k], &t);
        }
        sr[k] = (dl_series_t){names[k], n, x, y + k * n, NULL, NULL, NULL};
    }
    size_t nv = 0;
    for (size_t i = 1; i < n; i++) {
        dl_an_history_changes(g[i - 1].run, g[i].run, labels[nv], 512);
        if (labels[nv][0]) {
            vx[nv] = g[i].t;
            lp[nv] = labels[nv];
            nv++;
        }
    }
    dl_buf_printf(b, "<section class=\"group\"><h2>hosts ");
    dl_buf_esc(b, last->run->hosts);
    dl_buf_printf(b, ", profile ");
    dl_buf_esc(b, last->profile);
    char ranks[192];
    dl_an_ranks_text(last->run, ranks, sizeof(ranks));
    dl_buf_printf(b, ", ");
    dl_buf_esc(b, ranks);
    dl_buf_printf(b, " (%zu runs)</h2>\n", n);
    verdict_line(b, g, n);
    char id[32], title[512];
    snprintf(id, sizeof(id), "hist%d", gi);
    snprintf(title, sizeof(title), "%s bandwidth at %zu sizes over time (%s)", coll, ns,
             last->run->hosts);
    dl_chart_t c = {.id = id, .title = title, .ylabel = "busbw, algbw on one rank (GB/s)",
                    .yunit = "GB/s", .xkind = DL_X_TIME, .ylog = 1, .hline = NAN, .vx = vx,
                    .vlabel = lp, .nv = nv, .s = sr, .ns = ns};
    if (ns)
        dl_svg_chart(b, &c);
    runs_table(b, g, n);
    dl_buf_printf(b, "</section>\n");
    free(m), free(names), free(labels), free(lp);
    return DL_OK;
}

dl_status_t dl_an_html_history(const char *path, const dl_hist_t *h)
{
    dl_buf_t b = {0};
    dl_html_begin(&b, "dlcomm history");
    dl_buf_printf(&b, "<p>%zu runs in %zu groups (hosts, profile). Each chart: bandwidth at the "
                      "smallest, a middle and the largest size of the group's last run; green dashed "
                      "lines mark where a version changed. Verdicts follow compare's rule (5%% and "
                      "beyond the combined 95%% CI).</p>\n", h->nruns, h->ngroups);
    dl_status_t st = DL_OK;
    int gi = 0;
    for (size_t i = 0, j; st == DL_OK && i < h->nent; i = j) {
        for (j = i + 1; j < h->nent && !strcmp(h->ent[j].key, h->ent[i].key); j++)
            ;
        st = group(&b, &h->ent[i], j - i, gi++);
    }
    if (st == DL_OK)
        st = dl_html_end(&b, path);
    dl_buf_free(&b);
    return st;
}
