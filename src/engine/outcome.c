/* How a profile ended, agreed by every supervisor: each rank's outcome is
 * gathered by all, so every rank takes the same decision and rank 0
 * records who failed and why. */
#include "supervisor.h"

#include "../results/results.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dl_outcome_set(dl_sv_run_t *r, dl_rank_kind_t k, dl_status_t st, const char *fmt, ...)
{
    r->me.kind = k;
    r->me.status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->me.reason, sizeof(r->me.reason), fmt, ap);
    va_end(ap);
}

void dl_outcome_notify_peers(dl_sv_run_t *r)
{
    static int one = 1; /* a send buffer that outlives the request */
    const dl_engine_cfg_t *c = &r->e->cfg;
    for (int i = 0; i < c->nranks; i++) {
        if (i == c->rank)
            continue;
        MPI_Request req;
        if (MPI_Isend(&one, 1, MPI_INT, i, r->abort_tag, r->e->ctl, &req) == MPI_SUCCESS)
            MPI_Request_free(&req);
    }
}

int dl_outcome_agree(dl_sv_run_t *r, dl_rank_outcome_t *all)
{
    const dl_engine_cfg_t *c = &r->e->cfg;
    MPI_Request req;
    if (MPI_Iallgather(&r->me, sizeof(r->me), MPI_BYTE, all, sizeof(r->me), MPI_BYTE,
                       r->e->ctl, &req) != MPI_SUCCESS)
        return -1;
    /* Every peer's waits are bounded by the timeout; past that (or soon
     * after a signal) a peer is gone and the job cannot agree any more.
     * Soon: Open MPI 4.1's mpirun sends SIGKILL 1 s after its SIGTERM, and
     * rank 0 still has the record to write. */
    double start = dl_now(), limit = c->timeout_s + 30;
    struct timespec ms = {0, 1000000L};
    for (int flag = 0;;) {
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return 0;
        double waited = dl_now() - start;
        if (waited > limit || (dl_engine_interrupted() && waited > 0.6))
            return -1;
        nanosleep(&ms, NULL);
    }
}

static const char *const kind_names[] = {"ok", "peer", "error_from_peer", "timeout_waiting_on_peers",
                                         "interrupted", "error", "timeout", "crashed"};

/* The record's status for each (its names are the record's: one table). */
static dl_rec_status_t rec_status(dl_prof_status_t s)
{
    static const dl_rec_status_t v[] = {[DL_PROF_OK] = DL_REC_OK, [DL_PROF_ERROR] = DL_REC_ERROR,
                                        [DL_PROF_TIMEOUT] = DL_REC_TIMEOUT,
                                        [DL_PROF_CRASHED] = DL_REC_CRASHED,
                                        [DL_PROF_INTERRUPTED] = DL_REC_INTERRUPTED};
    return (unsigned)s < DL_ARRAY_SIZE(v) ? v[s] : DL_REC_ERROR;
}

const char *dl_prof_status_str(dl_prof_status_t s)
{
    return dl_rec_status_name(rec_status(s));
}

static dl_prof_status_t status_of(int kind)
{
    switch (kind) {
    case DL_RK_OK: return DL_PROF_OK;
    case DL_RK_CRASHED: return DL_PROF_CRASHED;
    case DL_RK_TIMEOUT: case DL_RK_TIMEOUT_WAIT: return DL_PROF_TIMEOUT;
    case DL_RK_INTERRUPTED: return DL_PROF_INTERRUPTED;
    default: return DL_PROF_ERROR;
    }
}

static void record_json(dl_sv_run_t *r, const dl_rank_outcome_t *all, int worst,
                        dl_prof_status_t ps)
{
    cJSON *pj = r->prof_json;
    int n = r->e->cfg.nranks;
    dl_record_set_status(pj, rec_status(ps), NULL);
    cJSON *fr = cJSON_AddArrayToObject(pj, "failed_ranks");
    cJSON *fl = cJSON_AddArrayToObject(pj, "failures");
    char reason[320] = "";
    for (int i = 0; i < n; i++) {
        if (all[i].kind == DL_RK_OK || all[i].kind == DL_RK_PEER)
            continue;
        cJSON *f = cJSON_CreateObject();
        cJSON_AddNumberToObject(f, "rank", i);
        cJSON_AddStringToObject(f, "kind", kind_names[all[i].kind]);
        cJSON_AddStringToObject(f, "reason", all[i].reason);
        cJSON_AddItemToArray(fl, f);
        if (all[i].kind != worst)
            continue;
        cJSON_AddItemToArray(fr, cJSON_CreateNumber(i));
        if (!reason[0])
            snprintf(reason, sizeof(reason), "rank %d: %s", i, all[i].reason);
    }
    cJSON_AddStringToObject(pj, "reason", reason);
}

static void record_transports(dl_sv_run_t *r, const dl_rank_outcome_t *all)
{
    cJSON *arr = NULL;
    for (int i = 0; i < r->e->cfg.nranks; i++) {
        if (!all[i].transports[0])
            continue;
        if (!arr)
            arr = cJSON_AddArrayToObject(r->prof_json, "transport_contradictions");
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", i);
        cJSON_AddStringToObject(o, "reason", all[i].transports);
        cJSON_AddItemToArray(arr, o);
        dl_warn("profile %s, rank %d: %s", r->p->name, i, all[i].transports);
    }
}

dl_prof_status_t dl_outcome_record(dl_sv_run_t *r, const dl_rank_outcome_t *all)
{
    int n = r->e->cfg.nranks, worst = DL_RK_OK;
    for (int i = 0; i < n; i++)
        if (all[i].kind > worst)
            worst = all[i].kind;
    dl_prof_status_t ps = status_of(worst);
    if (r->e->cfg.rank == 0 && r->prof_json)
        record_transports(r, all);
    if (r->e->cfg.rank == 0 && r->prof_json && ps != DL_PROF_OK) {
        record_json(r, all, worst, ps);
        dl_err("profile %s: %s: %s", r->p->name, dl_prof_status_str(ps),
               cJSON_GetObjectItem(r->prof_json, "reason")->valuestring);
    }
    return ps;
}
