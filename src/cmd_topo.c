/* dlcomm topo: what the harness sees of each host: NUMA nodes, cores, GPUs
 * with bus ids and NUMA nodes, NICs, and the GPU-GPU / GPU-NIC path types as
 * `nvidia-smi topo -m` names them. Under mpirun, one section per host. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "sys/mpistart.h"
#include "sys/sys.h"

typedef struct {
    const char *json;
} topo_opts_t;

static const dl_opt_t topo_opts[] = {
    {"json", 0, DL_OPT_STR, NULL, "FILE", "also write the sections as JSON", offsetof(topo_opts_t, json), NULL},
};
DL_OPTS_EXPORT("topo", topo_opts, topo_opts_t)

static const char usage[] =
    "usage: [mpirun -np N] dlcomm topo [--json FILE]\n\n"
    "Per host: NUMA nodes and their cores, GPUs (NVML, else hwloc's PCI view) with bus\n"
    "ids and NUMA nodes, NICs (hwloc network/OpenFabrics devices), and the path between\n"
    "each GPU pair and GPU-NIC pair: X, NV# (NVLinks), PIX, PXB, PHB, NODE, SYS.";

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void print_matrix(const cJSON *h, const cJSON *gpus)
{
    const cJSON *gg = cJSON_GetObjectItem(h, "gpu_gpu"), *gn = cJSON_GetObjectItem(h, "gpu_nic");
    const cJSON *cols = cJSON_GetObjectItem(h, "gpu_nic_columns"), *c;
    int ng = cJSON_GetArraySize(gpus);
    if (!ng)
        return;
    printf("%-8s", "");
    for (int j = 0; j < ng; j++)
        printf(" GPU%-4d", j);
    cJSON_ArrayForEach(c, cols)
    {
        printf(" %-7.7s", c->valuestring);
    }
    printf("\n");
    for (int i = 0; i < ng; i++) {
        printf("GPU%-5d", i);
        const cJSON *row = cJSON_GetArrayItem(gg, i), *e;
        cJSON_ArrayForEach(e, row)
        {
            printf(" %-7s", e->valuestring);
        }
        row = cJSON_GetArrayItem(gn, i);
        cJSON_ArrayForEach(e, row)
        {
            printf(" %-7s", e->valuestring);
        }
        printf("\n");
    }
}

static void print_host(const cJSON *h)
{
    const cJSON *e, *numa = cJSON_GetObjectItem(h, "numa_nodes"), *gpus = cJSON_GetObjectItem(h, "gpus");
    printf("# host %s: %d NUMA node(s), %.0f package(s), %.0f cores, %.0f PUs\n", str(h, "host"),
           cJSON_GetArraySize(numa), num(h, "packages"), num(h, "cores"), num(h, "pus"));
    cJSON_ArrayForEach(e, numa)
    {
        printf("  numa%.0f  cpus %s  memory %.1f GiB\n", num(e, "index"), str(e, "cpus"),
               num(e, "memory_bytes") / (1024.0 * 1024 * 1024));
    }
    if (!cJSON_GetArraySize(gpus))
        printf("  no GPU (%s)\n", str(h, "nvml"));
    cJSON_ArrayForEach(e, gpus)
    {
        printf("  GPU%.0f  %s  %s  numa %.0f\n", num(e, "index"), str(e, "name"), str(e, "bus_id"),
               num(e, "numa"));
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(h, "nics"))
    {
        printf("  NIC  %s (%s)  %s  numa %.0f\n", str(e, "name"), str(e, "kind"),
               *str(e, "bus_id") ? str(e, "bus_id") : "no PCI device", num(e, "numa"));
    }
    const cJSON *other = cJSON_GetObjectItem(h, "other_interfaces");
    if (cJSON_GetArraySize(other)) {
        printf("  interfaces hwloc sees no PCI device for:");
        cJSON_ArrayForEach(e, other)
        {
            printf(" %s", e->valuestring);
        }
        printf("\n");
    }
    print_matrix(h, gpus);
}

static int topo_main(int argc, char **argv)
{
    topo_opts_t o = {0};
    int code = dl_opts_command(topo_opts, DL_ARRAY_SIZE(topo_opts), &o, argc - 1, argv + 1, NULL,
                               0, NULL, usage);
    if (code >= 0)
        return code;
    if (o.json && dl_out_file_check("--json", o.json) != DL_OK)
        return 2;
    int rank;
    code = 0;
    /* SINGLE, as sweep: any higher level turns Open MPI 4.1's internal
     * locking on, which slows the small collectives measured here. */
    if (dl_mpi_start(&argc, &argv, 1) != DL_OK)
        return 3;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cJSON *hosts = dl_sys_topo_job(MPI_COMM_WORLD);
    if (rank == 0) {
        const cJSON *h;
        cJSON_ArrayForEach(h, hosts)
        {
            print_host(h);
        }
        if (o.json) {
            cJSON *doc = cJSON_CreateObject();
            cJSON_AddNumberToObject(doc, "schema", 1);
            cJSON_AddItemToObject(doc, "hosts", hosts);
            hosts = NULL;
            char *s = cJSON_Print(doc);
            code = dl_status_exit_code(s ? dl_write_atomic(o.json, s, strlen(s)) : DL_ERR_NOMEM);
            cJSON_free(s);
            cJSON_Delete(doc);
        }
    }
    cJSON_Delete(hosts);
    MPI_Finalize();
    return code;
}

int cmd_topo(int argc, char **argv)
{
    return dl_stdio_run(topo_main, argc, argv, 0);
}
