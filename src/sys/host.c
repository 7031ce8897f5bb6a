/* This host's facts and the job's fingerprint. */
#include "sys.h"
#include "watchdog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static void read_key(const char *path, const char *key, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    char line[512];
    size_t klen = strlen(key);
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *v = line + klen;
        while (*v == ' ' || *v == '\t' || *v == ':' || *v == '=' || *v == '"')
            v++;
        v[strcspn(v, "\"\n")] = '\0';
        snprintf(out, len, "%s", v);
        break;
    }
    fclose(f);
}

void dl_sys_host_info(dl_host_info_t *h)
{
    memset(h, 0, sizeof(*h));
    gethostname(h->host, sizeof(h->host) - 1);
    struct utsname u;
    if (uname(&u) == 0) /* "Linux 6.1.0-18-amd64 x86_64": release is what matters */
        snprintf(h->kernel, sizeof(h->kernel), "%.16s %.80s %.16s", u.sysname, u.release,
                 u.machine);
    read_key("/proc/cpuinfo", "model name", h->cpu, sizeof(h->cpu));
    read_key("/etc/os-release", "PRETTY_NAME", h->os, sizeof(h->os));
    h->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    h->pid = (int)getpid();
}

void dl_sys_mpi_version(char *buf, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    v[strcspn(v, ",\n")] = '\0'; /* "Open MPI v4.1.4" */
    snprintf(buf, len, "%s", v);
}

int dl_sys_local_rank(MPI_Comm comm, int *local_rank, int *local_size)
{
    MPI_Comm node;
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node))
        return -1;
    MPI_Comm_rank(node, local_rank);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
    return 0;
}

cJSON *dl_sys_fingerprint(MPI_Comm comm, char **hostnames)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    dl_host_info_t me, *all = NULL;
    dl_sys_host_info(&me);
    if (rank == 0 && !(all = calloc((size_t)n, sizeof(*all))))
        dl_watchdog_abort("out of memory (the ranks' hosts)");
    MPI_Gather(&me, sizeof(me), MPI_BYTE, all, sizeof(me), MPI_BYTE, 0, comm);
    if (rank != 0)
        return NULL;

    cJSON *fp = cJSON_CreateObject(), *hosts = cJSON_AddArrayToObject(fp, "hosts");
    char mpi[256];
    dl_sys_mpi_version(mpi, sizeof(mpi));
    int version, subversion;
    MPI_Get_version(&version, &subversion);
    cJSON_AddNumberToObject(fp, "ranks", n);
    cJSON *m = cJSON_AddObjectToObject(fp, "mpi");
    cJSON_AddStringToObject(m, "library", mpi);
    char std[16];
    snprintf(std, sizeof(std), "%d.%d", version, subversion);
    cJSON_AddStringToObject(m, "standard", std);
    for (int r = 0; r < n; r++) {
        cJSON *h = NULL, *it;
        cJSON_ArrayForEach(it, hosts)
        {
            if (strcmp(cJSON_GetObjectItem(it, "name")->valuestring, all[r].host) == 0)
                h = it;
        }
        if (!h) {
            h = cJSON_CreateObject();
            cJSON_AddStringToObject(h, "name", all[r].host);
            cJSON_AddStringToObject(h, "cpu", all[r].cpu);
            cJSON_AddNumberToObject(h, "cores", all[r].cores);
            cJSON_AddStringToObject(h, "kernel", all[r].kernel);
            cJSON_AddStringToObject(h, "os", all[r].os);
            cJSON_AddArrayToObject(h, "ranks");
            cJSON_AddArrayToObject(h, "pids");
            cJSON_AddItemToArray(hosts, h);
        }
        cJSON_AddItemToArray(cJSON_GetObjectItem(h, "ranks"), cJSON_CreateNumber(r));
        cJSON_AddItemToArray(cJSON_GetObjectItem(h, "pids"), cJSON_CreateNumber(all[r].pid));
    }
    int nhosts = cJSON_GetArraySize(hosts), max_per = 0;
    cJSON *it;
    cJSON_ArrayForEach(it, hosts)
    {
        int k = cJSON_GetArraySize(cJSON_GetObjectItem(it, "ranks"));
        max_per = k > max_per ? k : max_per;
    }
    cJSON_AddNumberToObject(fp, "nodes", nhosts);
    cJSON_AddNumberToObject(fp, "ranks_per_host", max_per);
    if (hostnames) {
        *hostnames = malloc((size_t)n * 256);
        for (int r = 0; *hostnames && r < n; r++)
            snprintf(*hostnames + (size_t)r * 256, 256, "%s", all[r].host);
    }
    free(all);
    return fp;
}
