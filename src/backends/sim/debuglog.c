/* Channel lines in NCCL's words for the paths modelled, in the worker's
 * NCCL_DEBUG_FILE: the supervisor's check of what a profile really used
 * (sys/ncclog.c) then runs on machines without GPUs too. */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *nccl_via(const char *path)
{
    if (strcmp(path, "nvlink") == 0 || strcmp(path, "pcie") == 0)
        return "P2P/CUMEM";
    if (strcmp(path, "shm") == 0)
        return "SHM/direct/direct";
    if (strcmp(path, "socket") == 0)
        return "NET/Socket/0";
    return strstr(path, "gpudirect") ? "NET/IB/0/GDRDMA" : "NET/IB/0";
}

void sim_debug_log(const sim_ctx_t *c)
{
    const char *file = getenv("NCCL_DEBUG_FILE"), *level = getenv("NCCL_DEBUG");
    if (!file || !level || strcasecmp(level, "INFO") != 0)
        return;
    FILE *f = fopen(file, "w");
    if (!f)
        return;
    int gpn = c->sys.gpus_per_node, r = c->rank % c->model_ranks, pid = (int)getpid();
    fprintf(f, "sim:%d:%d [%d] NCCL INFO dlcomm sim backend: modelled channels, no NCCL ran\n",
            pid, pid, r % gpn);
    if (gpn > 1)
        fprintf(f, "sim:%d:%d [%d] NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] via %s\n", pid, pid,
                r % gpn, r, r % gpn, (r + 1) % c->model_ranks, (r + 1) % gpn,
                nccl_via(c->intra_name));
    if (c->nodes > 1)
        fprintf(f, "sim:%d:%d [%d] NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] [send] via %s\n",
                pid, pid, r % gpn, r, r % gpn, (r + gpn) % c->model_ranks, r % gpn,
                nccl_via(c->inter_name));
    fclose(f);
}
