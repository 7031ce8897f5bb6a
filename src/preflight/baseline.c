/* Baseline rows from an earlier run, read by the analysis module's reader
 * (a dlcomm run.json or nccl-tests output). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The profile a row came from. */
static const dl_rec_profile_t *prof_of(const dl_record_t *run, const dl_row_t *row)
{
    for (size_t i = 0; i < run->nprofs; i++)
        if (strcmp(run->profs[i].name, row->profile) == 0)
            return &run->profs[i];
    return NULL;
}

/* The best busbw among matching rows of every profile: a baseline is what
 * the system can do, and the best profile says that. Only float32 sum
 * out-of-place rows match, as preflight measures those; and only rows
 * measured (not modelled) by the backend this preflight measures with: a
 * model's or another backend's figure says nothing of this one's, at any
 * rank count (a model's rows carry the model's). When rows match but none
 * is comparable, why says so. */
double pf_baseline_busbw(const dl_record_t *run, const char *backend, const char *coll,
                         uint64_t bytes, int ranks, char *why, size_t whylen)
{
    double best = -1;
    int modelled = 0;
    const char *other = NULL;
    char modelled_by[32] = "";
    why[0] = '\0';
    for (size_t i = 0; i < run->nrows; i++) {
        const dl_row_t *row = &run->rows[i];
        if (strcmp(row->collective, coll) != 0 || strcmp(row->dtype, "float32") != 0 ||
            strcmp(row->placement, "in") == 0 || row->bytes != bytes ||
            (strcmp(row->op, "sum") != 0 && strcmp(row->op, "none") != 0) || !(row->busbw >= 0))
            continue;
        const dl_rec_profile_t *pr = prof_of(run, row);
        const char *be = pr ? pr->backend : "";
        if (row->modelled || (pr && pr->modelled)) {
            modelled = 1;
            snprintf(modelled_by, sizeof(modelled_by), "%s", be);
            continue;
        }
        if (strcmp(be, backend) != 0) {
            other = be[0] ? be : "an unknown backend";
            continue;
        }
        if (row->ranks != ranks) /* a model's ranks are its own: its rows are judged above */
            continue;
        best = row->busbw > best ? row->busbw : best;
    }
    if (best < 0 && modelled)
        snprintf(why, whylen, "not comparable: the baseline row is modelled (%s backend), "
                              "not measured", modelled_by[0] ? modelled_by : "a modelling");
    else if (best < 0 && other)
        snprintf(why, whylen, "not comparable: the baseline row is from %s, this preflight "
                              "measures %s", other, backend);
    return best;
}

/* The modelling backend's figure for the case preflight measured: one
 * call's time at the model's ranks (nodes x its ranks a node), as busbw. */
double pf_model_busbw(const struct dl_pf_model *m, int nhosts, dl_coll_id_t coll, uint64_t bytes)
{
    dl_expect_t e;
    if (!m->be || m->be->expect(m->opts, coll, bytes, nhosts, &e) != DL_OK || !(e.time_s > 0))
        return -1;
    return dl_busbw(dl_colls[coll], e.ranks, e.bytes, e.time_s);
}
