/* This host's facts and the job's fingerprint. */
#include "sys.h"
#include "launcher.h"
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

void dl_sys_host_key(char key[DL_HOST_KEY_LEN])
{
    const char *id = getenv("NCCL_HOSTID");
    memset(key, 0, DL_HOST_KEY_LEN);
    if (id && *id) {
        snprintf(key, DL_HOST_KEY_LEN, "%.200s", id);
        key[strcspn(key, "\n")] = '\0';
        return;
    }
    char name[200] = "", boot[64] = "";
    gethostname(name, sizeof(name) - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof(boot), f))
            boot[0] = '\0';
        fclose(f);
    }
    boot[strcspn(boot, "\n")] = '\0';
    snprintf(key, DL_HOST_KEY_LEN, "%s\n%s", name, boot);
}

void dl_sys_host_shown(const char *key, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)strcspn(key, "\n"), key);
}

/* host_of[r] for n keys stride bytes apart: hosts numbered in the order of
 * their first rank; returns how many. */
static int group_keys(const char *keys, size_t stride, int n, int *host_of)
{
    int nhosts = 0;
    for (int r = 0; r < n; r++) {
        int k = 0;
        while (k < r && strncmp(keys + (size_t)k * stride, keys + (size_t)r * stride,
                                DL_HOST_KEY_LEN) != 0)
            k++;
        host_of[r] = k < r ? host_of[k] : nhosts++;
    }
    return nhosts;
}

dl_status_t dl_sys_hosts(MPI_Comm comm, dl_hosts_t *h)
{
    memset(h, 0, sizeof(*h));
    MPI_Comm_size(comm, &h->nranks);
    char mine[DL_HOST_KEY_LEN], (*all)[DL_HOST_KEY_LEN] = calloc((size_t)h->nranks, sizeof(*all));
    h->host_of = calloc((size_t)h->nranks, sizeof(int));
    h->names = calloc((size_t)h->nranks, sizeof(*h->names));
    if (!all || !h->host_of || !h->names) /* the others wait in the gather: end the job */
        dl_watchdog_abort("out of memory (the ranks' hosts)");
    dl_sys_host_key(mine);
    MPI_Allgather(mine, DL_HOST_KEY_LEN, MPI_CHAR, all, DL_HOST_KEY_LEN, MPI_CHAR, comm);
    h->nhosts = group_keys(all[0], DL_HOST_KEY_LEN, h->nranks, h->host_of);
    for (int r = h->nranks - 1; r >= 0; r--) /* ends on each host's first rank */
        dl_sys_host_shown(all[r], h->names[h->host_of[r]], DL_HOST_KEY_LEN);
    free(all);
    return DL_OK;
}

void dl_sys_hosts_free(dl_hosts_t *h)
{
    free(h->host_of);
    free(h->names);
    h->host_of = NULL;
    h->names = NULL;
}

dl_status_t dl_sys_shared_gpu_env(int *on)
{
    const char *v = getenv("DLCOMM_SHARED_GPU");
    *on = 0;
    if (!v || !*v || strcmp(v, "0") == 0)
        return DL_OK;
    if (strcmp(v, "1") != 0) {
        dl_err("DLCOMM_SHARED_GPU=%.32s: must be 1 (several ranks on one GPU, each its own "
               "NCCL host) or 0", v);
        return DL_ERR_USAGE;
    }
    *on = 1;
    const char *id = getenv("NCCL_HOSTID");
    if (id && *id)
        return DL_OK; /* the user's own identities */
    int rank = dl_launcher_rank();
    if (rank < 0) {
        dl_err("DLCOMM_SHARED_GPU=1: no launcher says this process's rank (run it under "
               "mpirun or srun)");
        return DL_ERR_USAGE;
    }
    char name[200] = "", hostid[256];
    gethostname(name, sizeof(name) - 1);
    snprintf(hostid, sizeof(hostid), "%s/r%d", name, rank);
    return setenv("NCCL_HOSTID", hostid, 1) == 0 ? DL_OK : DL_ERR_NOMEM;
}

void dl_sys_host_info(dl_host_info_t *h)
{
    memset(h, 0, sizeof(*h));
    gethostname(h->host, sizeof(h->host) - 1);
    dl_sys_host_key(h->key);
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
    int *host_of = calloc((size_t)n, sizeof(int));
    if (!host_of)
        dl_watchdog_abort("out of memory (the ranks' hosts)");
    group_keys(all[0].key, sizeof(*all), n, host_of);

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
        cJSON *h = cJSON_GetArrayItem(hosts, host_of[r]);
        char shown[DL_HOST_KEY_LEN];
        dl_sys_host_shown(all[r].key, shown, sizeof(shown));
        if (!h) {
            h = cJSON_CreateObject();
            cJSON_AddStringToObject(h, "name", shown);
            if (strcmp(shown, all[r].host) != 0) /* NCCL_HOSTID: the machine it is on */
                cJSON_AddStringToObject(h, "machine", all[r].host);
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
            dl_sys_host_shown(all[r].key, *hostnames + (size_t)r * 256, 256);
    }
    free(all);
    free(host_of);
    return fp;
}
