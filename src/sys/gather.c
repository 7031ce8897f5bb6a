/* Per-host facts travel to rank 0 as JSON text: their size varies by host. */
#include "sys.h"
#include "watchdog.h"

#include <stdlib.h>
#include <string.h>

cJSON *dl_sys_gather_json(MPI_Comm comm, const cJSON *mine)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    char *text = mine ? cJSON_PrintUnformatted(mine) : NULL;
    int len = text ? (int)strlen(text) + 1 : 0;
    int *lens = rank == 0 ? calloc((size_t)n, sizeof(int)) : NULL;
    int *offs = rank == 0 ? calloc((size_t)n, sizeof(int)) : NULL;
    if (rank == 0 && (!lens || !offs))
        dl_watchdog_abort("out of memory (gathering the ranks' facts)");
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    char *all = NULL;
    size_t total = 0;
    if (rank == 0) {
        for (int r = 0; r < n; r++) {
            offs[r] = (int)total;
            total += (size_t)lens[r];
        }
        if (!(all = malloc(total + 1)))
            dl_watchdog_abort("out of memory (gathering the ranks' facts)");
    }
    MPI_Gatherv(text ? text : "", len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, comm);
    cJSON_free(text);
    cJSON *out = NULL;
    if (rank == 0) {
        out = cJSON_CreateArray();
        for (int r = 0; all && r < n; r++) {
            cJSON *item = lens[r] ? cJSON_Parse(all + offs[r]) : NULL;
            if (item)
                cJSON_AddItemToArray(out, item);
        }
    }
    free(all);
    free(lens);
    free(offs);
    return out;
}

cJSON *dl_sys_topo_job(MPI_Comm comm)
{
    int local = 0, nlocal = 1;
    dl_sys_local_rank(comm, &local, &nlocal);
    cJSON *mine = NULL;
    if (local == 0) { /* one section per host */
        dl_gpus_t *g = calloc(1, sizeof(*g));
        char why[256] = "";
        int have = g && dl_sys_gpus(g, why, sizeof(why)) == DL_OK;
        mine = dl_sys_topo(have ? g : NULL);
        cJSON_AddStringToObject(mine, "nvml", have ? "ok" : why);
        if (have && g->driver[0])
            cJSON_AddStringToObject(mine, "driver", g->driver);
        free(g);
    }
    cJSON *all = dl_sys_gather_json(comm, mine);
    cJSON_Delete(mine);
    return all;
}
