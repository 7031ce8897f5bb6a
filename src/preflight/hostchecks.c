/* Checks of each host before any traffic: NUMA binding, GPU health. */
#include "internal.h"

dl_status_t pf_host_checks(pf_ctx_t *c)
{
    (void)c;
    return DL_OK;
}
