/* report: what the library chose along each curve's sizes (where it
 * switches algorithm or protocol), and where a profile that forces another
 * setting was faster than that choice beyond the noise. The choice is the
 * rows' (run.json "algo", "proto", "nchannels", "choice_from"): NCCL's own,
 * through dlcomm's profiler plugin, or the sim's model of it. */
#include "analysis.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int said(const dl_row_t *r)
{
    return r->algo[0] || r->proto[0];
}

/* Two names the same where both are known (NCCL's "Ring", a log's "RING"). */
static int same_name(const char *a, const char *b)
{
    return !a[0] || !b[0] || strcasecmp(a, b) == 0;
}

static void seg_open(dl_rep_seg_t *s, const dl_row_t *r)
{
    *s = (dl_rep_seg_t){.lo = r->bytes, .hi = r->bytes, .ch_lo = r->nchannels,
                        .ch_hi = r->nchannels, .mixed = r->choice_mixed};
    snprintf(s->algo, sizeof(s->algo), "%s", r->algo);
    snprintf(s->proto, sizeof(s->proto), "%s", r->proto);
}

/* Runs of consecutive sizes with one algorithm and protocol; a size that
 * does not say ends a run (nothing is assumed across it). */
static dl_status_t segs_make(const dl_curve_t *c, dl_rep_chose_t *out)
{
    int open = 0;
    for (size_t i = 0; i < c->n; i++) {
        const dl_row_t *r = c->v[i];
        if (!said(r)) {
            open = 0;
            continue;
        }
        if (!out->from[0])
            snprintf(out->from, sizeof(out->from), "%s", r->choice_from);
        dl_rep_seg_t *s = out->nsegs ? &out->segs[out->nsegs - 1] : NULL;
        if (open && strcasecmp(s->algo, r->algo) == 0 && strcasecmp(s->proto, r->proto) == 0) {
            s->hi = r->bytes;
            s->ch_lo = r->nchannels < s->ch_lo ? r->nchannels : s->ch_lo;
            s->ch_hi = r->nchannels > s->ch_hi ? r->nchannels : s->ch_hi;
            s->mixed |= r->choice_mixed;
            continue;
        }
        dl_rep_seg_t *v = realloc(out->segs, (out->nsegs + 1) * sizeof(*v));
        if (!v)
            return DL_ERR_NOMEM;
        out->segs = v;
        seg_open(&v[out->nsegs++], r);
        open = 1;
    }
    out->modelled = strcmp(out->from, "model") == 0;
    return DL_OK;
}

static const dl_rec_profile_t *prof_of(const dl_record_t *r, const char *name)
{
    for (size_t i = 0; i < r->nprofs; i++)
        if (strcmp(r->profs[i].name, name) == 0)
            return &r->profs[i];
    return NULL;
}

static const dl_row_t *row_at(const dl_curve_t *c, uint64_t bytes)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i]->bytes == bytes)
            return c->v[i];
    return NULL;
}

/* Whether the forced profile ran something else than the choice at this
 * size: its own rows' choice where they say, else the setting it forces. */
static int other_setting(const dl_row_t *ch, const dl_row_t *f, const dl_rec_profile_t *fp)
{
    if (said(f))
        return !same_name(ch->algo, f->algo) || !same_name(ch->proto, f->proto);
    return (fp->algo[0] && strcasecmp(fp->algo, ch->algo) != 0) ||
           (fp->proto[0] && strcasecmp(fp->proto, ch->proto) != 0);
}

/* The report's tie rule (as its bands'): faster when the log of the time
 * ratio is beyond the combined 95% half-widths, or, a spread unknown, by
 * more than a printed tenth of a percent. */
static int faster_at(const dl_row_t *ch, const dl_row_t *f, double *ratio, double *noise)
{
    if (!(ch->time_us > 0) || !(f->time_us > 0))
        return 0;
    double d = log(ch->time_us / f->time_us);
    double ec = dl_an_spread(ch) / ch->time_us, ef = dl_an_spread(f) / f->time_us;
    *noise = sqrt(ec * ec + ef * ef);
    *ratio = d;
    return isfinite(*noise) ? d > *noise : d >= 0.0005;
}

typedef struct {
    dl_rep_coll_t *rc;
    int chooser, forced;
    const dl_rec_profile_t *fp;
    dl_rep_beat_t cur;  /* the run of sizes being gathered (nsizes 0: none) */
    double lsum;
} beat_acc_t;

static dl_status_t beat_close(beat_acc_t *a)
{
    if (!a->cur.nsizes)
        return DL_OK;
    dl_rep_beat_t *v = realloc(a->rc->beats, (a->rc->nbeats + 1) * sizeof(*v));
    if (!v)
        return DL_ERR_NOMEM;
    a->cur.faster_pct = (exp(a->lsum / a->cur.nsizes) - 1) * 100;
    v[a->rc->nbeats++] = a->cur;
    a->rc->beats = v;
    a->cur.nsizes = 0;
    return DL_OK;
}

/* Adds one size where the forced profile was faster to the open run, or
 * starts one (either side's choice changed, or sizes between did not count). */
static dl_status_t beat_add(beat_acc_t *a, const dl_row_t *ch, const dl_row_t *f, double d,
                            double noise)
{
    char text[48], ftext[48];
    dl_rec_choice_text(ch->algo, ch->proto, 0, 0, text, sizeof(text));
    dl_rec_choice_text(f->algo, f->proto, 0, 0, ftext, sizeof(ftext));
    dl_status_t st = DL_OK;
    if (a->cur.nsizes && (strcmp(a->cur.chose, text) || strcmp(a->cur.forced_choice, ftext)))
        st = beat_close(a);
    if (!a->cur.nsizes) {
        a->cur = (dl_rep_beat_t){.chooser = a->chooser, .forced = a->forced, .lo = ch->bytes,
                                 .noise_pct = 0, .modelled = strcmp(ch->choice_from, "model") == 0};
        snprintf(a->cur.chose, sizeof(a->cur.chose), "%s", text);
        snprintf(a->cur.forced_choice, sizeof(a->cur.forced_choice), "%s", ftext);
        snprintf(a->cur.forces, sizeof(a->cur.forces), "%s%s%s%s%s",
                 a->fp->algo[0] ? "NCCL_ALGO=" : "", a->fp->algo,
                 a->fp->algo[0] && a->fp->proto[0] ? ", " : "", a->fp->proto[0] ? "NCCL_PROTO=" : "",
                 a->fp->proto);
        a->lsum = 0;
    }
    a->cur.hi = ch->bytes;
    a->cur.nsizes++;
    a->lsum += d;
    a->cur.noise_pct = isfinite(noise) && isfinite(a->cur.noise_pct)
                           ? fmax(a->cur.noise_pct, 100 * noise) : NAN;
    return st;
}

/* One chooser curve against one forced curve, size by size. */
static dl_status_t beats_pair(beat_acc_t *a)
{
    const dl_curve_t *c = &a->rc->cv[a->chooser], *fc = &a->rc->cv[a->forced];
    dl_status_t st = DL_OK;
    for (size_t i = 0; i < c->n && st == DL_OK; i++) {
        const dl_row_t *ch = c->v[i], *f = row_at(fc, ch->bytes);
        double d = 0, noise = NAN;
        if (said(ch) && f && other_setting(ch, f, a->fp) && faster_at(ch, f, &d, &noise))
            st = beat_add(a, ch, f, d, noise);
        else
            st = beat_close(a);
    }
    return st == DL_OK ? beat_close(a) : st;
}

/* A curve lets the library choose when its profile forces neither the
 * algorithm nor the protocol and its rows say what was chosen. */
static int is_chooser(const dl_rep_coll_t *rc, size_t k, const dl_rec_profile_t *p)
{
    return rc->chose[k].nsegs && (!p || (!p->algo[0] && !p->proto[0]));
}

dl_status_t dl_an_choice_make(const dl_record_t *r, dl_rep_coll_t *rc)
{
    rc->chose = calloc(rc->ncv + 1, sizeof(*rc->chose));
    dl_status_t st = rc->chose ? DL_OK : DL_ERR_NOMEM;
    for (size_t k = 0; k < rc->ncv && st == DL_OK; k++)
        st = segs_make(&rc->cv[k], &rc->chose[k]);
    for (size_t k = 0; k < rc->ncv && st == DL_OK; k++) {
        if (!is_chooser(rc, k, prof_of(r, rc->cv[k].v[0]->profile)))
            continue;
        for (size_t j = 0; j < rc->ncv && st == DL_OK; j++) {
            const dl_rec_profile_t *fp = prof_of(r, rc->cv[j].v[0]->profile);
            if (j == k || !fp || (!fp->algo[0] && !fp->proto[0]) ||
                rc->cv[j].v[0]->group != rc->cv[k].v[0]->group)
                continue;
            beat_acc_t a = {.rc = rc, .chooser = (int)k, .forced = (int)j, .fp = fp};
            st = beats_pair(&a);
        }
    }
    return st;
}

void dl_an_choice_free(dl_rep_coll_t *rc)
{
    for (size_t k = 0; rc->chose && k < rc->ncv; k++)
        free(rc->chose[k].segs);
    free(rc->chose);
    free(rc->beats);
    rc->chose = NULL;
    rc->beats = NULL;
    rc->nbeats = 0;
}

/* ---- rendering ---- */

static void range_text(uint64_t lo, uint64_t hi, char *buf, size_t len)
{
    char a[32], b[32];
    dl_size_format(lo, a, sizeof(a));
    dl_size_format(hi, b, sizeof(b));
    if (lo == hi)
        snprintf(buf, len, "%s", a);
    else
        snprintf(buf, len, "%s-%s", a, b);
}

void dl_an_seg_text(const dl_rep_seg_t *s, char *buf, size_t len)
{
    char ch[32] = "";
    if (s->ch_lo > 0 && s->ch_lo != s->ch_hi)
        snprintf(ch, sizeof(ch), "/%d-%d", s->ch_lo, s->ch_hi);
    else if (s->ch_hi > 0)
        snprintf(ch, sizeof(ch), "/%d", s->ch_hi);
    snprintf(buf, len, "%s%s%s%s%s", s->algo[0] ? s->algo : "?", s->proto[0] ? "/" : "", s->proto,
             ch, s->mixed ? "*" : "");
}

void dl_an_beat_text(const dl_rep_coll_t *rc, const dl_rep_beat_t *b, char *buf, size_t len)
{
    char sizes[80], noise[48] = "no spread known";
    range_text(b->lo, b->hi, sizes, sizeof(sizes));
    if (isfinite(b->noise_pct))
        snprintf(noise, sizeof(noise), "noise up to %.1f%%", b->noise_pct);
    snprintf(buf, len, "%s %s%s (profile %s); profile %s (%s%s%s) %s faster by %.1f%% at "
             "size%s %s (%d size%s; %s)", b->modelled ? "NCCL would choose" : "NCCL chose", b->chose,
             b->modelled ? ", modelled" : "", rc->names[b->chooser], rc->names[b->forced], b->forces,
             strcmp(b->forced_choice, "-") ? ": ran " : "",
             strcmp(b->forced_choice, "-") ? b->forced_choice : "",
             b->modelled ? "modelled" : "measured", b->faster_pct, b->lo == b->hi ? "" : "s", sizes,
             b->nsizes, b->nsizes == 1 ? "" : "s", noise);
}

/* "Tree/LL at 8 B-512 KiB -> Ring/Simple at 128 MiB": each run of sizes, an
 * arrow where the choice switches (somewhere between the two sizes). */
static void segs_text(FILE *f, const dl_rep_chose_t *c)
{
    for (size_t i = 0; i < c->nsegs; i++) {
        char what[64], sizes[80];
        dl_an_seg_text(&c->segs[i], what, sizeof(what));
        range_text(c->segs[i].lo, c->segs[i].hi, sizes, sizeof(sizes));
        fprintf(f, "%s%s at %s", i ? " -> " : "", what, sizes);
    }
}

void dl_an_choice_text(FILE *f, const dl_rep_coll_t *rc)
{
    for (size_t k = 0; k < rc->ncv; k++) {
        const dl_rep_chose_t *c = &rc->chose[k];
        if (!c->nsegs)
            continue;
        fprintf(f, "  chose %-16s ", rc->names[k]);
        segs_text(f, c);
        fprintf(f, "%s\n", c->modelled ? "  (modelled: the sim's choice by NCCL's rules)"
                            : strcmp(c->from, "profiler") == 0 ? "  (NCCL's profiler)" : "");
    }
    for (size_t i = 0; i < rc->nbeats; i++) {
        char line[512];
        dl_an_beat_text(rc, &rc->beats[i], line, sizeof(line));
        fprintf(f, "  faster than chosen: %s\n", line);
    }
}

static cJSON *seg_json(const dl_rep_seg_t *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "min_bytes", (double)s->lo);
    cJSON_AddNumberToObject(o, "max_bytes", (double)s->hi);
    if (s->algo[0])
        cJSON_AddStringToObject(o, "algo", s->algo);
    if (s->proto[0])
        cJSON_AddStringToObject(o, "proto", s->proto);
    if (s->ch_hi > 0) {
        cJSON_AddNumberToObject(o, "nchannels_min", s->ch_lo);
        cJSON_AddNumberToObject(o, "nchannels_max", s->ch_hi);
    }
    cJSON_AddBoolToObject(o, "mixed", s->mixed);
    return o;
}

static cJSON *beat_json(const dl_rep_coll_t *rc, const dl_rep_beat_t *b)
{
    char line[512];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "chose", b->chose);
    cJSON_AddStringToObject(o, "profile", rc->names[b->chooser]);
    cJSON_AddStringToObject(o, "faster_profile", rc->names[b->forced]);
    cJSON_AddStringToObject(o, "forces", b->forces);
    cJSON_AddNumberToObject(o, "faster_pct", b->faster_pct);
    cJSON_AddNumberToObject(o, "min_bytes", (double)b->lo);
    cJSON_AddNumberToObject(o, "max_bytes", (double)b->hi);
    cJSON_AddNumberToObject(o, "sizes", b->nsizes);
    if (isfinite(b->noise_pct))
        cJSON_AddNumberToObject(o, "noise_pct", b->noise_pct);
    else
        cJSON_AddNullToObject(o, "noise_pct");
    cJSON_AddBoolToObject(o, "modelled", b->modelled);
    dl_an_beat_text(rc, b, line, sizeof(line));
    cJSON_AddStringToObject(o, "text", line);
    return o;
}

void dl_an_choice_json(cJSON *coll, const dl_rep_coll_t *rc)
{
    cJSON *curves = cJSON_GetObjectItemCaseSensitive(coll, "profiles");
    for (size_t k = 0; k < rc->ncv; k++) {
        cJSON *cv = cJSON_GetArrayItem(curves, (int)k);
        const dl_rep_chose_t *c = &rc->chose[k];
        if (!cv || !c->nsegs)
            continue;
        cJSON_AddStringToObject(cv, "choice_from", c->from[0] ? c->from : "unknown");
        cJSON *a = cJSON_AddArrayToObject(cv, "choice");
        for (size_t i = 0; i < c->nsegs; i++)
            cJSON_AddItemToArray(a, seg_json(&c->segs[i]));
    }
    cJSON *a = cJSON_AddArrayToObject(coll, "faster_than_chosen");
    for (size_t i = 0; i < rc->nbeats; i++)
        cJSON_AddItemToArray(a, beat_json(rc, &rc->beats[i]));
}
