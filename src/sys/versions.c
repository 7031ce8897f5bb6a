/* dlcomm's version and the library versions it was built against and runs
 * with: `dlcomm version` prints them, run.json carries them ("versions"). */
#include <cjson/cJSON.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../backends/backends.h"
#include "../version.h"
#include "sys.h"

#ifdef DL_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#ifndef DL_VERSION
#define DL_VERSION "0.1.0"
#endif

const char *dl_version(void)
{
    return DL_VERSION;
}

/* CUDA's integer versions (12080) as text ("12.8"); 0 is "none". */
static void cuda_text(int v, char *buf, size_t len)
{
    if (v > 0)
        snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
    else
        snprintf(buf, len, "none");
}

void *dl_versions_json(void)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "dlcomm", DL_VERSION);
    cJSON *be = cJSON_AddArrayToObject(j, "backends");
    for (size_t i = 0; i < dl_backend_count; i++)
        cJSON_AddItemToArray(be, cJSON_CreateString(dl_backends[i]->name));
    cJSON *built = cJSON_AddObjectToObject(j, "built_with");
    cJSON *run = cJSON_AddObjectToObject(j, "runtime");
    char buf[256];
#ifdef OMPI_MAJOR_VERSION
    snprintf(buf, sizeof(buf), "Open MPI v%d.%d.%d", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
             OMPI_RELEASE_VERSION);
#else
    snprintf(buf, sizeof(buf), "MPI %d.%d", MPI_VERSION, MPI_SUBVERSION);
#endif
    cJSON_AddStringToObject(built, "mpi", buf);
    dl_sys_mpi_version(buf, sizeof(buf)); /* MPI_Get_library_version: allowed before MPI_Init */
    cJSON_AddStringToObject(run, "mpi", buf);
#ifdef DL_HAVE_NCCL
    snprintf(buf, sizeof(buf), "%d.%d.%d", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
    cJSON_AddStringToObject(built, "nccl", buf);
    cuda_text(CUDART_VERSION, buf, sizeof(buf));
    cJSON_AddStringToObject(built, "cuda", buf);
    int v = 0;
    if (ncclGetVersion(&v) == ncclSuccess && v > 0) { /* needs no GPU */
        snprintf(buf, sizeof(buf), "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
        cJSON_AddStringToObject(run, "nccl", buf);
    } else {
        cJSON_AddNullToObject(run, "nccl");
    }
    /* Neither needs a GPU; without a driver the driver's version is 0. */
    v = 0;
    cudaRuntimeGetVersion(&v);
    cuda_text(v, buf, sizeof(buf));
    cJSON_AddStringToObject(run, "cuda_runtime", buf);
    v = 0;
    cudaDriverGetVersion(&v);
    cuda_text(v, buf, sizeof(buf));
    cJSON_AddStringToObject(run, "cuda_driver", buf);
#endif
    return j;
}

static void print_pair(FILE *f, const char *what, const cJSON *built, const cJSON *run,
                       const char *bkey, const char *rkey)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(built, bkey);
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(run, rkey);
    if (!b && !r)
        return;
    fprintf(f, "%-13s built with %s, found %s\n", what,
            cJSON_IsString(b) ? b->valuestring : "-",
            cJSON_IsString(r) ? r->valuestring : "none");
}

void dl_versions_print(FILE *f)
{
    cJSON *j = dl_versions_json();
    const cJSON *built = cJSON_GetObjectItem(j, "built_with"), *run = cJSON_GetObjectItem(j, "runtime");
    fprintf(f, "dlcomm %s\n", DL_VERSION);
    fprintf(f, "backends:    ");
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(j, "backends"))
        fprintf(f, " %s", b->valuestring);
    fprintf(f, "\n");
    print_pair(f, "mpi:", built, run, "mpi", "mpi");
    print_pair(f, "nccl:", built, run, "nccl", "nccl");
    print_pair(f, "cuda runtime:", built, run, "cuda", "cuda_runtime");
    const cJSON *drv = cJSON_GetObjectItem(run, "cuda_driver");
    if (drv)
        fprintf(f, "%-13s found %s\n", "cuda driver:", drv->valuestring);
    cJSON_Delete(j);
}
