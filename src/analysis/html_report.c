/* report --html: the run's header and profiles, per collective busbw and
 * time against size (one line per profile, CI band, the system's line
 * rate), then the report's own tables, from the figures dl_an_report_make
 * computed for the text and JSON reports, and tune's answer when given. */
#include "html.h"
#include "../sys/system.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A path's bandwidth as drawn (NAN: the description has none). */
static double path_bw(const dl_system_t *s, dl_path_id_t k)
{
    return s->path[k].bw > 0 ? s->path[k].bw : NAN;
}

dl_status_t dl_an_line_rate(const char *file, int nodes, dl_line_t *out)
{
    out->gbps = NAN;
    out->label[0] = '\0';
    dl_system_t s;
    dl_status_t st = dl_system_read(file, &s);
    if (st != DL_OK)
        return st;
    double nv = path_bw(&s, DL_PATH_NVLINK), pcie = path_bw(&s, DL_PATH_PCIE);
    const char *iname = s.p2p && isfinite(nv) ? "NVLink" : s.p2p && isfinite(pcie) ? "PCIe" : "SHM";
    double intra = s.p2p && isfinite(nv) ? nv : s.p2p && isfinite(pcie) ? pcie
                                                                         : path_bw(&s, DL_PATH_SHM);
    int n = snprintf(out->label, sizeof(out->label), "%s line rate: %s %.4g GB/s", s.name, iname,
                     intra);
    out->gbps = intra;
    if (nodes > 1) {
        double inter = path_bw(&s, DL_PATH_SOCKET);
        char what[64] = "TCP";
        if (s.nics > 0) {
            inter = s.nics * s.nic_gbit / 8;
            snprintf(what, sizeof(what), "%dx %g Gb/s NICs", s.nics, s.nic_gbit);
        }
        if (isfinite(inter) && n > 0 && (size_t)n < sizeof(out->label))
            snprintf(out->label + n, sizeof(out->label) - (size_t)n, ", between %d nodes %s %.4g GB/s",
                     nodes, what, inter);
        if (isfinite(inter) && inter < intra)
            out->gbps = inter;
    }
    return isfinite(out->gbps) ? DL_OK : DL_ERR_INPUT;
}

void dl_an_run_line(const dl_record_t *r, const char *file, dl_line_t *out)
{
    out->gbps = NAN;
    out->label[0] = '\0';
    int nodes = r->nhosts;
    for (size_t i = 0; i < r->nprofs; i++)
        if (r->profs[i].sim_nodes > 0)
            nodes = r->profs[i].sim_nodes;
    if (!file && r->system[0])
        file = r->system;
    if (file && dl_an_line_rate(file, nodes, out) != DL_OK)
        dl_warn("no line rate in the charts: %s is not a readable system description", file);
}

dl_status_t dl_an_html_check(const char *opt, const char *path)
{
    char dir[1024];
    const char *slash = strrchr(path, '/');
    struct stat sb;
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else
        snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (!path[0] || (slash && !slash[1]) || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) ||
        dl_dir_writable(dir) != DL_OK) {
        dl_err("%s %s: not a file in a folder that exists and can be written", opt, path);
        return DL_ERR_USAGE;
    }
    return dl_out_file_check(opt, path) == DL_OK ? DL_OK : DL_ERR_USAGE;
}

static void size_cell(dl_buf_t *b, uint64_t bytes)
{
    char s[32];
    dl_size_format(bytes, s, sizeof(s));
    dl_buf_printf(b, "<td class=\"num\">%s</td>", s);
}

static void curves_table(dl_buf_t *b, const dl_rep_coll_t *rc)
{
    dl_buf_printf(b, "<table class=\"peaks\"><caption>Peaks, saturation and latency floor</caption>"
                     "<thead><tr><th>profile</th><th>metric</th><th>peak (GB/s)</th><th>at</th>"
                     "<th>50%% of peak from</th><th>90%% of peak from</th><th>latency floor (us)</th>"
                     "<th>at</th></tr></thead><tbody>");
    for (size_t k = 0; k < rc->ncv; k++) {
        const dl_curve_t *c = &rc->cv[k];
        dl_buf_printf(b, "<tr><td>");
        dl_buf_esc(b, rc->names[k]);
        dl_buf_printf(b, "%s</td><td>%s</td><td class=\"num\">%.4g%s</td>",
                      c->v[0]->modelled ? " (modelled)" : "", c->use_algbw ? "algbw" : "busbw",
                      c->peak, c->peak_i == c->n - 1 ? " (at the largest size: may rise further)" : "");
        size_cell(b, c->v[c->peak_i]->bytes);
        size_cell(b, c->v[c->i50]->bytes);
        size_cell(b, c->v[c->i90]->bytes);
        dl_buf_printf(b, "<td class=\"num\">%.4g</td>", c->floor_us);
        size_cell(b, c->v[c->floor_i]->bytes);
        dl_buf_printf(b, "</tr>");
    }
    dl_buf_printf(b, "</tbody></table>\n<table class=\"bands\"><caption>Best profile per size band "
                     "(lowest geometric-mean time over the sizes every profile measured)</caption>"
                     "<thead><tr><th>band</th><th>best</th><th>geo-mean time (us)</th><th>sizes</th>"
                     "<th>next</th><th>next is slower by</th></tr></thead><tbody>");
    for (size_t i = 0; i < DL_NBANDS; i++) {
        const dl_rep_band_t *bd = &rc->bands[i];
        dl_buf_printf(b, "<tr><td>");
        dl_buf_esc(b, bd->name);
        if (bd->best < 0) {
            dl_buf_printf(b, "</td><td colspan=\"5\">no sizes measured in every profile</td></tr>");
            continue;
        }
        dl_buf_printf(b, "</td><td>");
        if (bd->tie) /* inside the noise: no winner to name */
            dl_buf_printf(b, "tie: ");
        dl_buf_esc(b, rc->names[bd->best]);
        dl_buf_printf(b, "</td><td class=\"num\">%.4g</td><td class=\"num\">%d</td><td>", bd->sc_best,
                      bd->nsizes);
        dl_buf_esc(b, bd->second >= 0 ? rc->names[bd->second] : "(the only profile)");
        if (bd->second >= 0)
            dl_buf_printf(b, "</td><td class=\"num\">%.1f%%%s</td></tr>",
                          (bd->sc_second / bd->sc_best - 1) * 100, bd->tie ? " (a tie: inside the noise)" : "");
        else
            dl_buf_printf(b, "</td><td>-</td></tr>");
    }
    dl_buf_printf(b, "</tbody></table>\n");
}

/* The choice strips under a collective's bandwidth chart: one per curve
 * whose rows say what the library chose, a box per run of sizes. */
typedef struct {
    dl_strip_t *st;
    dl_strip_seg_t *seg;
    char (*lab)[64], (*tit)[192];
    size_t n, modelled;
} strips_t;

static void strips_free(strips_t *o)
{
    free(o->st);
    free(o->seg);
    free(o->lab);
    free(o->tit);
}

static dl_status_t strips_make(const dl_rep_coll_t *rc, strips_t *o)
{
    size_t total = 0, j = 0;
    memset(o, 0, sizeof(*o));
    for (size_t k = 0; k < rc->ncv; k++)
        total += rc->chose[k].nsegs;
    o->st = calloc(rc->ncv + 1, sizeof(*o->st));
    o->seg = calloc(total + 1, sizeof(*o->seg));
    o->lab = calloc(total + 1, sizeof(*o->lab));
    o->tit = calloc(total + 1, sizeof(*o->tit));
    if (!o->st || !o->seg || !o->lab || !o->tit)
        return DL_ERR_NOMEM;
    for (size_t k = 0; k < rc->ncv; k++) {
        const dl_rep_chose_t *c = &rc->chose[k];
        if (!c->nsegs)
            continue;
        o->st[o->n++] = (dl_strip_t){rc->names[k], &o->seg[j], c->nsegs};
        o->modelled += c->modelled;
        for (size_t i = 0; i < c->nsegs; i++, j++) {
            char lo[32], hi[32];
            dl_an_seg_text(&c->segs[i], o->lab[j], sizeof(o->lab[j]));
            dl_size_format(c->segs[i].lo, lo, sizeof(lo));
            dl_size_format(c->segs[i].hi, hi, sizeof(hi));
            snprintf(o->tit[j], sizeof(o->tit[j]), "%.63s: %s at %s%s%s (%s)", rc->names[k],
                     o->lab[j], lo, c->segs[i].lo == c->segs[i].hi ? "" : " - ",
                     c->segs[i].lo == c->segs[i].hi ? "" : hi,
                     c->modelled ? "modelled: the sim's choice by NCCL's rules" : "NCCL's profiler");
            o->seg[j] = (dl_strip_seg_t){(double)c->segs[i].lo, (double)c->segs[i].hi, o->lab[j],
                                         o->tit[j]};
        }
    }
    return DL_OK;
}

/* The same as a table, and the forced profiles that beat the choice. */
static void choice_table(dl_buf_t *b, const dl_rep_coll_t *rc, const strips_t *sp)
{
    if (!sp->n)
        return;
    dl_buf_printf(b, "<table class=\"choice\"><caption>What NCCL chose along the sizes%s (read "
                     "at each row's checked call)</caption><thead><tr><th>profile</th><th>sizes</th>"
                     "<th>algorithm/protocol/channels</th></tr></thead><tbody>",
                  sp->modelled ? " (modelled: the sim's choice by NCCL's rules)" : "");
    for (size_t k = 0; k < sp->n; k++)
        for (size_t i = 0; i < sp->st[k].n; i++) {
            const dl_strip_seg_t *g = &sp->st[k].v[i];
            dl_buf_printf(b, "<tr><td>");
            dl_buf_esc(b, sp->st[k].name);
            dl_buf_printf(b, "</td><td>");
            dl_buf_esc(b, g->title);
            dl_buf_printf(b, "</td><td>");
            dl_buf_esc(b, g->label);
            dl_buf_printf(b, "</td></tr>");
        }
    dl_buf_printf(b, "</tbody></table>\n");
    for (size_t i = 0; i < rc->nbeats; i++) {
        char line[512];
        dl_an_beat_text(rc, &rc->beats[i], line, sizeof(line));
        dl_buf_printf(b, "<p class=\"warn beat\">");
        dl_buf_esc(b, line);
        dl_buf_printf(b, "</p>\n");
    }
}

/* The two charts of one collective: bandwidth and time, a line per profile. */
static dl_status_t coll_charts(dl_buf_t *b, const dl_rep_coll_t *rc, const dl_line_t *line, int ci,
                               const strips_t *sp)
{
    dl_html_curve_t *h = calloc(rc->ncv + 1, sizeof(*h));
    dl_series_t *bw = calloc(rc->ncv + 1, sizeof(*bw)), *tm = calloc(rc->ncv + 1, sizeof(*tm));
    dl_status_t st = h && bw && tm ? DL_OK : DL_ERR_NOMEM;
    size_t k = 0;
    for (; st == DL_OK && k < rc->ncv; k++) {
        if ((st = dl_html_curve(&rc->cv[k], &h[k])) != DL_OK)
            break;
        bw[k] = (dl_series_t){rc->names[k], rc->cv[k].n, h[k].x, h[k].bw, h[k].bwlo, h[k].bwhi, NULL};
        tm[k] = (dl_series_t){rc->names[k], rc->cv[k].n, h[k].x, h[k].t, h[k].tlo, h[k].thi, NULL};
    }
    if (st == DL_OK) {
        const dl_row_t *r0 = rc->cv[0].v[0];
        const char *m = rc->cv[0].use_algbw ? "algbw" : "busbw";
        char id[96], title[256], yl[64];
        snprintf(id, sizeof(id), "c%d-bw", ci);
        snprintf(title, sizeof(title), "%s %s against size (%s %s, %s, %d ranks)", rc->coll, m,
                 r0->dtype, r0->op, dl_an_place_name(r0->placement), r0->ranks);
        snprintf(yl, sizeof(yl), "%s (GB/s)", m);
        dl_chart_t c = {.id = id, .title = title, .ylabel = yl, .yunit = "GB/s", .xkind = DL_X_BYTES,
                        .hline = line && !rc->cv[0].use_algbw ? line->gbps : NAN,
                        .hline_label = line ? line->label : NULL, .s = bw, .ns = rc->ncv,
                        .strips = sp->st, .nstrips = sp->n,
                        .strip_label = sp->modelled ? "NCCL's choice (modelled)" : "NCCL's choice"};
        dl_svg_chart(b, &c);
        snprintf(id, sizeof(id), "c%d-time", ci);
        snprintf(title, sizeof(title), "%s time per call against size (%s %s, %s, %d ranks)", rc->coll,
                 r0->dtype, r0->op, dl_an_place_name(r0->placement), r0->ranks);
        c = (dl_chart_t){.id = id, .title = title, .ylabel = "time per call (us)", .yunit = "us",
                         .xkind = DL_X_BYTES, .ylog = 1, .hline = NAN, .s = tm, .ns = rc->ncv};
        dl_svg_chart(b, &c);
    }
    for (size_t i = 0; h && i < k; i++)
        dl_html_curve_free(&h[i]);
    free(h);
    free(bw);
    free(tm);
    return st;
}

static void advice_table(dl_buf_t *b, const dl_report_t *rep)
{
    dl_buf_printf(b, "<h2 id=\"advice\">Advice</h2><table class=\"advice\"><caption>Horovod settings "
                     "and NCCL algorithm / protocol crossovers, with the figures behind each</caption>"
                     "<thead><tr><th>about</th><th>setting</th><th>value</th><th>why</th></tr></thead><tbody>");
    for (size_t i = 0; i < rep->nadv; i++) {
        const dl_advice_t *a = &rep->adv[i];
        dl_buf_printf(b, "<tr><td>%s</td><td>", a->section == DL_ADV_HOROVOD ? "Horovod" : "NCCL");
        dl_buf_esc(b, a->name);
        dl_buf_printf(b, "</td><td>");
        dl_buf_esc(b, a->value[0] ? a->value : "not judged");
        dl_buf_printf(b, "</td><td>");
        dl_buf_esc(b, a->why);
        dl_buf_printf(b, "</td></tr>");
    }
    dl_buf_printf(b, "</tbody></table>\n");
}

static void wrong_rows(dl_buf_t *b, const dl_record_t *r)
{
    size_t n = 0;
    double sum = 0;
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].wrong > 0)
            n++, sum += r->rows[i].wrong;
    if (n)
        dl_buf_printf(b, "<div class=\"notice\" id=\"wrong\"><p><strong>%zu rows have wrong elements "
                         "(%.0f in all): a correctness failure, see wrong_per_rank in run.json"
                         "</strong></p></div>\n", n, sum);
}

dl_status_t dl_an_html_report(const char *path, const dl_record_t *r, const dl_record_t *base,
                              const dl_line_t *line, const dl_tune_rep_t *tune)
{
    dl_report_t rep;
    dl_status_t st = dl_an_report_make(r, base, &rep);
    if (st != DL_OK)
        return st;
    dl_buf_t b = {0};
    char title[700];
    snprintf(title, sizeof(title), "dlcomm report: %s", r->path);
    dl_html_begin(&b, title);
    if (rep.modelled)
        dl_buf_printf(&b, "<p class=\"warn\" id=\"modelled\"><strong>Modelled:</strong> figures of "
                          "profiles marked (modelled) come from the sim backend's model, not from a "
                          "measurement.</p>\n");
    wrong_rows(&b, r);
    dl_html_stragglers(&b, r);
    dl_html_run_table(&b, r);
    dl_html_profiles(&b, r);
    if (line && isfinite(line->gbps)) {
        dl_buf_printf(&b, "<p>Busbw charts draw the system's line rate: ");
        dl_buf_esc(&b, line->label);
        dl_buf_printf(&b, ".</p>\n");
    }
    for (size_t i = 0; i < rep.ncolls && st == DL_OK; i++) {
        dl_buf_printf(&b, "<section class=\"collective\"><h2 id=\"coll-");
        dl_buf_esc(&b, rep.colls[i].coll);
        dl_buf_printf(&b, "\">");
        dl_buf_esc(&b, rep.colls[i].coll);
        dl_buf_printf(&b, "</h2>\n");
        strips_t sp;
        st = strips_make(&rep.colls[i], &sp);
        if (st == DL_OK)
            st = coll_charts(&b, &rep.colls[i], line, (int)i, &sp);
        curves_table(&b, &rep.colls[i]);
        if (st == DL_OK)
            choice_table(&b, &rep.colls[i], &sp);
        strips_free(&sp);
        dl_buf_printf(&b, "</section>\n");
    }
    advice_table(&b, &rep);
    if (st == DL_OK && tune)
        st = dl_html_tune(&b, tune);
    dl_an_report_free(&rep);
    if (st == DL_OK)
        st = dl_html_end(&b, path);
    dl_buf_free(&b);
    return st;
}
