/* Rank 0's supervisor turns its worker's RESULT and INFO messages into
 * the same records the in-process path produces. */
#include "supervisor.h"

#include <stdlib.h>
#include <string.h>

void dl_sv_on_info(dl_prof_run_t *r, const dl_msg_t *m)
{
    cJSON *info = cJSON_Parse(m->data);
    if (!info)
        return;
    cJSON *mr = cJSON_GetObjectItem(info, "modelled_ranks");
    if (cJSON_IsNumber(mr))
        r->modelled_ranks = mr->valueint;
    if (r->prof_json)
        cJSON_AddItemToObject(r->prof_json, "backend_info", info);
    else
        cJSON_Delete(info);
}

static int decode(const dl_msg_t *m, dl_result_t *out)
{
    dl_wire_result_t w;
    if (m->len < sizeof(w))
        return -1;
    memcpy(&w, m->data, sizeof(w));
    if (w.coll < 0 || w.coll >= DL_COLL_COUNT || w.nranks < 1)
        return -1;
    size_t need = sizeof(w) + (w.arrays ? (size_t)w.nranks * 16 : 0);
    if (m->len < need)
        return -1;
    memset(out, 0, sizeof(*out));
    dl_case_t *c = &out->c;
    c->coll = dl_colls[w.coll];
    c->dtype = (dl_dtype_t)w.dtype;
    c->op = (dl_op_t)w.op;
    c->place = (dl_place_t)w.place;
    c->root = w.root;
    c->bytes_requested = w.bytes_requested;
    c->counts = w.counts;
    out->nranks = w.nranks;
    out->t = w.t;
    out->avg_s = w.avg_s;
    out->algbw_gbps = w.algbw_gbps;
    out->busbw_gbps = w.busbw_gbps;
    out->setup_s = w.setup_s;
    out->timed_s = w.timed_s;
    out->wrong = w.wrong;
    out->converged = w.converged;
    out->status = (dl_status_t)w.status;
    if (w.arrays) {
        const char *p = (const char *)m->data + sizeof(w);
        out->wrong_per_rank = malloc((size_t)w.nranks * sizeof(uint64_t));
        out->rank_mean_s = malloc((size_t)w.nranks * sizeof(double));
        memcpy(out->wrong_per_rank, p, (size_t)w.nranks * 8);
        memcpy(out->rank_mean_s, p + (size_t)w.nranks * 8, (size_t)w.nranks * 8);
    }
    return 0;
}

/* A model of M GPUs carried by P processes: bus bandwidth follows M; the
 * per-rank arrays stay per process. */
static void patch_modelled(dl_prof_run_t *r, const dl_result_t *res)
{
    cJSON *rows = cJSON_GetObjectItem(r->prof_json, "results");
    cJSON *row = rows ? cJSON_GetArrayItem(rows, cJSON_GetArraySize(rows) - 1) : NULL;
    if (!row)
        return;
    cJSON_ReplaceItemInObject(row, "ranks", cJSON_CreateNumber(r->modelled_ranks));
    cJSON_ReplaceItemInObject(row, "busbw_factor",
                              cJSON_CreateNumber(res->c.coll->busbw_factor(r->modelled_ranks)));
    cJSON_AddNumberToObject(row, "processes", res->nranks);
}

void dl_sv_on_result(dl_prof_run_t *r, const dl_msg_t *m)
{
    dl_result_t res;
    if (decode(m, &res) != 0) {
        dl_warn("profile %s: a malformed result from the worker was dropped", r->p->name);
        return;
    }
    int remodel = r->modelled_ranks > 0 && r->modelled_ranks != res.nranks;
    if (remodel)
        res.busbw_gbps = dl_busbw(res.c.coll, r->modelled_ranks, res.c.counts.bytes, res.t.mean);
    if (r->e->cfg.on_result)
        r->e->cfg.on_result(r->e->cfg.cb_arg, &res);
    if (remodel && r->prof_json)
        patch_modelled(r, &res);
    dl_result_free(&res);
}
