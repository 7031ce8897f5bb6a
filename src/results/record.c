/* The run record's statuses, its field table, and growing and freeing a
 * record (record.h). */
#include "record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DL_REC_NAME(id, name) name,
static const char *const status_names[DL_REC_STATUS_COUNT] = {DL_REC_STATUS_LIST(DL_REC_NAME)};
#undef DL_REC_NAME

const char *dl_rec_status_name(dl_rec_status_t s)
{
    return (unsigned)s < DL_REC_STATUS_COUNT ? status_names[s] : "unknown";
}

dl_rec_status_t dl_rec_status_parse(const char *name)
{
    for (int i = 0; name && i < DL_REC_STATUS_COUNT; i++)
        if (strcmp(name, status_names[i]) == 0)
            return (dl_rec_status_t)i;
    return DL_REC_UNKNOWN;
}

int dl_rec_status_failed(dl_rec_status_t s)
{
    return s != DL_REC_OK && s != DL_REC_SKIPPED;
}

void dl_rec_choice_text(const char *algo, const char *proto, int nchannels, int mixed, char *buf,
                        size_t len)
{
    char ch[16] = "";
    if (!algo[0] && !proto[0] && nchannels <= 0) {
        snprintf(buf, len, "-");
        return;
    }
    if (nchannels > 0)
        snprintf(ch, sizeof(ch), "/%d", nchannels);
    snprintf(buf, len, "%s%s%s%s%s", algo[0] ? algo : "?", proto[0] || ch[0] ? "/" : "",
             proto[0] ? proto : ch[0] ? "?" : "", ch, mixed ? "*" : "");
}

void dl_row_choice_text(const dl_row_t *r, char *buf, size_t len)
{
    dl_rec_choice_text(r->algo, r->proto, r->nchannels, r->choice_mixed, buf, len);
}

/* Names compare without case (NCCL's "Ring", a log's "RING"); a part one
 * side does not know is no difference. */
int dl_row_choice_differs(const dl_row_t *a, const dl_row_t *b)
{
    if (a->algo[0] && b->algo[0] && strcasecmp(a->algo, b->algo) != 0)
        return 1;
    if (a->proto[0] && b->proto[0] && strcasecmp(a->proto, b->proto) != 0)
        return 1;
    return a->nchannels > 0 && b->nchannels > 0 && a->nchannels != b->nchannels;
}

const dl_rec_field_t dl_rec_version_fields[] = {
#define F(label, m) {label, offsetof(dl_record_t, m), sizeof(((dl_record_t *)0)->m)}
    F("tool", tool), F("NCCL", nccl), F("CUDA", cuda), F("driver", driver), F("MPI", mpi),
    F("kernel", kernel),
#undef F
};
const size_t dl_rec_nversion_fields = DL_ARRAY_SIZE(dl_rec_version_fields);

void dl_rec_row_init(dl_row_t *row)
{
    memset(row, 0, sizeof(*row));
    row->time_us = row->p50_us = row->ci95_us = row->stdev_us = NAN;
    row->algbw = row->busbw = NAN;
    row->wrong = NAN;
    row->group = -1;
}

/* Unknown (NAN) passes; a known figure must be finite and in [lo, hi). */
static int out_of(double v, double lo, double hi, int lo_open)
{
    return !isnan(v) && !(isfinite(v) && (lo_open ? v > lo : v >= lo) && v < hi);
}

int dl_rec_row_impossible(const dl_row_t *row, char *why, size_t len)
{
    const struct {
        const char *name;
        double v, lo, hi;
        int lo_open;
    } f[] = {
        {"a mean time of %g us", row->time_us, 0, 1e15, 1},
        {"a median time of %g us", row->p50_us, 0, 1e15, 1},
        {"a spread (ci95) of %g us", row->ci95_us, 0, 1e15, 0},
        {"a standard deviation of %g us", row->stdev_us, 0, 1e15, 0},
        {"an algbw of %g GB/s", row->algbw, 0, DL_REC_MAX_GBPS, 0},
        {"a busbw of %g GB/s", row->busbw, 0, DL_REC_MAX_GBPS, 0},
        {"%g wrong elements", row->wrong, 0, 1.8e19, 0},
    };
    for (size_t i = 0; i < DL_ARRAY_SIZE(f); i++)
        if (out_of(f[i].v, f[i].lo, f[i].hi, f[i].lo_open)) {
            snprintf(why, len, f[i].name, f[i].v);
            return 1;
        }
    return 0;
}

dl_status_t dl_rec_push_row(dl_record_t *r, const dl_row_t *row)
{
    if (r->nrows == r->cap) { /* grows by half: at most a third unused */
        size_t cap = r->cap ? r->cap + r->cap / 2 : 64;
        dl_row_t *v = realloc(r->rows, cap * sizeof(*v));
        if (!v)
            return DL_ERR_NOMEM;
        r->rows = v;
        r->cap = cap;
    }
    r->rows[r->nrows++] = *row;
    return DL_OK;
}

dl_rec_profile_t *dl_rec_push_profile(dl_record_t *r, const char *name)
{
    dl_rec_profile_t *v = realloc(r->profs, (r->nprofs + 1) * sizeof(*v));
    if (!v)
        return NULL;
    r->profs = v;
    dl_rec_profile_t *p = &v[r->nprofs++];
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->status = DL_REC_OK;
    return p;
}

void dl_record_free(dl_record_t *r)
{
    for (size_t i = 0; i < r->nprofs; i++)
        free(r->profs[i].env);
    free(r->rows);
    free(r->profs);
    free(r->env);
    free(r->strag);
    memset(r, 0, sizeof(*r));
}
