/* Rank 0's supervisor hands its worker's RESULT records to the command as
 * the in-process path does, and keeps its INFO facts. */
#include "supervisor.h"

#include <stdlib.h>
#include <string.h>

void dl_sv_on_info(dl_sv_run_t *r, const dl_msg_t *m)
{
    cJSON *info = cJSON_Parse(m->data);
    if (!info)
        return;
    if (r->prof_json)
        cJSON_AddItemToObject(r->prof_json, "backend_info", info);
    else
        cJSON_Delete(info);
}

void dl_sv_on_result(dl_sv_run_t *r, const dl_msg_t *m)
{
    dl_result_t res;
    if (dl_result_unpack(m->data, m->len, &res) != DL_OK) {
        dl_warn("profile %s: a malformed result from the worker was dropped", r->p->name);
        return;
    }
    if (r->e->cfg.on_result)
        r->e->cfg.on_result(r->e->cfg.cb_arg, &res);
    dl_result_free(&res);
}
