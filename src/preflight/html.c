/* preflight --html: the verdict, the pair matrix as a heat map and the
 * check lines, in one page (the analysis layer's page and buffer). In the
 * heat map each cell is a pair's busbw against the median host's best pair (a colour
 * scale, and the figure in the cell's title); slow cells carry a thick
 * border and an "x", so a slow link is one cell and its mirror, a slow
 * host its whole row and column, readable without colour. */
#include "../analysis/html.h"
#include "preflight.h"

#include <math.h>
#include <string.h>

#define CELL 28
#define LABEL 120 /* room for the row labels */
#define TOP 50     /* and for the column labels, slanted */

/* Green (at or above the median) through yellow to red (half of it or less). */
static void colour(double ratio, char *buf, size_t len)
{
    double t = ratio >= 1 ? 0 : ratio <= 0.5 ? 1 : (1 - ratio) / 0.5;
    int r = t < 0.5 ? (int)(80 + 2 * t * 175) : 255, g = t < 0.5 ? 200 : (int)(200 * (1 - t) * 2);
    snprintf(buf, len, "rgb(%d,%d,60)", r, g < 0 ? 0 : g);
}

static void cell(dl_buf_t *b, int x, int y, const cJSON *v, int slow, double median,
                 const char *ha, const char *hb)
{
    char col[32] = "#ddd";
    if (cJSON_IsNumber(v) && median > 0)
        colour(v->valuedouble / median, col, sizeof(col));
    dl_buf_printf(b, "<g class=\"cell%s\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                     "fill=\"%s\" stroke=\"%s\" stroke-width=\"%d\"><title>",
                  slow ? " slow" : "", x, y, CELL, CELL, col, slow ? "#000" : "#fff", slow ? 3 : 1);
    dl_buf_esc(b, ha);
    dl_buf_printf(b, " - ");
    dl_buf_esc(b, hb);
    if (cJSON_IsNumber(v))
        dl_buf_printf(b, ": %.3f GB/s%s</title></rect>", v->valuedouble, slow ? " (slow)" : "");
    else
        dl_buf_printf(b, ": not measured</title></rect>");
    if (slow)
        dl_buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">x</text>", x + CELL / 2,
                      y + CELL / 2 + 5);
    dl_buf_printf(b, "</g>");
}

static void heat_map(dl_buf_t *b, const cJSON *m)
{
    const cJSON *hosts = cJSON_GetObjectItem(m, "hosts"), *bw = cJSON_GetObjectItem(m, "busbw_gbps");
    const cJSON *slow = cJSON_GetObjectItem(m, "slow");
    double median = cJSON_GetNumberValue(cJSON_GetObjectItem(m, "median_gbps"));
    int n = cJSON_GetArraySize(hosts), w = LABEL + n * CELL + 10, h = TOP + n * CELL + 10;
    dl_buf_printf(b, "<h2>Pair busbw (host x host)</h2><p>Each cell: all-reduce busbw of the two "
                     "hosts together, against the median host's best pair %.3f GB/s (green at or "
                     "above it, red at half or less); cells marked x are what the pair scope named "
                     "slow. "
                     "A slow link is one cell and its mirror; a slow host, its row and column.</p>",
                  median);
    dl_buf_printf(b, "<svg class=\"heatmap\" role=\"img\" width=\"%d\" height=\"%d\" "
                     "font-size=\"11\"><title>pair busbw, host x host</title>", w, h);
    for (int i = 0; i < n; i++) {
        const char *h = cJSON_GetArrayItem(hosts, i)->valuestring;
        dl_buf_printf(b, "<text class=\"row\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", LABEL - 4,
                      TOP + i * CELL + CELL / 2 + 4);
        dl_buf_esc(b, h);
        dl_buf_printf(b, "</text><text class=\"col\" transform=\"translate(%d,%d) rotate(-60)\">",
                      LABEL + i * CELL + CELL / 2, TOP - 4);
        dl_buf_esc(b, h);
        dl_buf_printf(b, "</text>");
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            cell(b, LABEL + j * CELL, TOP + i * CELL,
                 cJSON_GetArrayItem(cJSON_GetArrayItem(bw, i), j),
                 cJSON_IsTrue(cJSON_GetArrayItem(cJSON_GetArrayItem(slow, i), j)), median,
                 cJSON_GetArrayItem(hosts, i)->valuestring, cJSON_GetArrayItem(hosts, j)->valuestring);
    dl_buf_printf(b, "</svg>");
}

static void checks_table(dl_buf_t *b, const cJSON *doc)
{
    static const char *const keys[] = {"status", "check", "scope", "subject", "message"};
    dl_buf_printf(b, "<h2>Checks</h2><table class=\"checks\"><tr><th>status</th><th>check</th>"
                     "<th>scope</th><th>subject</th><th>what</th></tr>");
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "checks"))
    {
        dl_buf_printf(b, "<tr>");
        for (size_t k = 0; k < DL_ARRAY_SIZE(keys); k++) {
            const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(e, keys[k]));
            dl_buf_printf(b, "<td>");
            dl_buf_esc(b, s ? s : "");
            dl_buf_printf(b, "</td>");
        }
        dl_buf_printf(b, "</tr>");
    }
    dl_buf_printf(b, "</table>");
}

dl_status_t dl_pf_html(const char *path, const cJSON *doc)
{
    dl_buf_t b = {0};
    dl_html_begin(&b, "dlcomm preflight");
    const cJSON *v = cJSON_GetObjectItem(doc, "verdict");
    dl_buf_printf(&b, "<p class=\"verdict\">Verdict: <strong>");
    dl_buf_esc(&b, cJSON_GetStringValue(cJSON_GetObjectItem(v, "status")) ?: "?");
    dl_buf_printf(&b, "</strong></p><ul>");
    static const char *const named[] = {"hosts", "pairs", "rails", "gpus", "ranks"};
    for (size_t k = 0; k < DL_ARRAY_SIZE(named); k++) {
        const cJSON *l = cJSON_GetObjectItem(v, named[k]);
        char *txt = cJSON_GetArraySize(l) ? cJSON_PrintUnformatted(l) : NULL;
        if (txt) {
            dl_buf_printf(&b, "<li>%s: ", named[k]);
            dl_buf_esc(&b, txt);
            dl_buf_printf(&b, "</li>");
        }
        cJSON_free(txt);
    }
    dl_buf_printf(&b, "</ul>");
    const cJSON *sc = cJSON_GetObjectItem(doc, "scopes");
    const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "pair"), "matrix");
    if (!m) /* the plan scope's pairs instead */
        m = cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "plan"), "matrix");
    if (m)
        heat_map(&b, m);
    else
        dl_buf_printf(&b, "<p>No pair matrix: neither the pair nor the plan scope ran.</p>");
    checks_table(&b, doc);
    dl_status_t st = dl_html_end(&b, path);
    dl_buf_free(&b);
    return st;
}
