/* Hosts, pair schedules and outliers: the pure arithmetic of preflight. */
#include "preflight.h"
#include "../sys/sys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

dl_status_t dl_pf_layout_from_names(const char *names, int nranks, dl_pf_layout_t *l)
{
    memset(l, 0, sizeof(*l));
    l->nranks = nranks;
    l->host_of = calloc((size_t)nranks, sizeof(int));
    l->local_of = calloc((size_t)nranks, sizeof(int));
    l->names = calloc((size_t)nranks, sizeof(*l->names));
    int *count = calloc((size_t)nranks, sizeof(int));
    if (!l->host_of || !l->local_of || !l->names || !count) {
        free(count);
        dl_pf_layout_free(l);
        return DL_ERR_NOMEM;
    }
    for (int r = 0; r < nranks; r++) {
        const char *n = names + (size_t)r * 256;
        int h;
        for (h = 0; h < l->nhosts; h++)
            if (strncmp(l->names[h], n, 255) == 0)
                break;
        if (h == l->nhosts)
            snprintf(l->names[l->nhosts++], 256, "%.255s", n);
        l->host_of[r] = h;
        l->local_of[r] = count[h]++;
        if (count[h] > l->max_local)
            l->max_local = count[h];
    }
    free(count);
    return DL_OK;
}

dl_status_t dl_pf_layout_build(MPI_Comm world, dl_pf_layout_t *l)
{
    int n;
    MPI_Comm_size(world, &n);
    char me[DL_HOST_KEY_LEN];
    dl_sys_host_key(me); /* NCCL's idea of a host (NCCL_HOSTID) */
    char *all = malloc((size_t)n * DL_HOST_KEY_LEN);
    if (!all)
        return DL_ERR_NOMEM;
    if (MPI_Allgather(me, DL_HOST_KEY_LEN, MPI_CHAR, all, DL_HOST_KEY_LEN, MPI_CHAR, world) !=
        MPI_SUCCESS) {
        free(all);
        dl_err("cannot gather host names across the job");
        return DL_ERR_COMM;
    }
    dl_status_t st = dl_pf_layout_from_names(all, n, l);
    for (int h = 0; st == DL_OK && h < l->nhosts; h++) /* keys compared; names shown */
        l->names[h][strcspn(l->names[h], "\n")] = '\0';
    int lsize = 1;
    if (st == DL_OK)
        dl_sys_local_rank(world, &l->dev_local, &lsize);
    free(all);
    return st;
}

void dl_pf_layout_free(dl_pf_layout_t *l)
{
    free(l->host_of);
    free(l->local_of);
    free(l->names);
    memset(l, 0, sizeof(*l));
}

dl_pf_pairs_t dl_pf_pairs_resolve(dl_pf_pairs_t mode, int nhosts)
{
    if (mode != DL_PF_PAIRS_AUTO)
        return mode;
    return nhosts <= DL_PF_ALL_PAIRS_MAX_HOSTS ? DL_PF_PAIRS_ALL : DL_PF_PAIRS_RING;
}

static void pair(int *p, int a, int b)
{
    p[a] = b;
    p[b] = a;
}

/* Circle method: host m-1 stays put, the others rotate; with an odd count
 * the missing host m-1 is the bye. */
static int all_pairs(int n, int *partner)
{
    int m = n + (n & 1), rounds = m - 1;
    for (int r = 0; r < rounds; r++) {
        int *p = partner + (size_t)r * n;
        if (m - 1 < n)
            pair(p, m - 1, r);
        for (int k = 1; k < m / 2; k++)
            pair(p, (r + k) % (m - 1), (r - k + m - 1) % (m - 1));
    }
    return rounds;
}

/* (h, h+1): even h first, then odd h; with an odd count the closing pair
 * (n-1, 0) shares a host with both and needs a round of its own. */
static int ring_pairs(int n, int *partner)
{
    if (n == 2) {
        pair(partner, 0, 1);
        return 1;
    }
    for (int h = 0; h + 1 < n; h++)
        pair(partner + (size_t)(h & 1) * n, h, h + 1);
    if (n % 2 == 0) {
        pair(partner + n, n - 1, 0);
        return 2;
    }
    pair(partner + 2 * (size_t)n, n - 1, 0);
    return 3;
}

int dl_pf_pair_rounds(int nhosts, dl_pf_pairs_t mode, int **partner)
{
    *partner = NULL;
    mode = dl_pf_pairs_resolve(mode, nhosts);
    if (nhosts < 2 || mode == DL_PF_PAIRS_NONE)
        return 0;
    size_t cells = (size_t)(nhosts + 1) * nhosts;
    int *p = malloc(cells * sizeof(int));
    if (!p)
        return 0;
    for (size_t i = 0; i < cells; i++)
        p[i] = -1;
    *partner = p;
    return mode == DL_PF_PAIRS_ALL ? all_pairs(nhosts, p) : ring_pairs(nhosts, p);
}

int dl_pf_low_outliers(const double *v, int n, double min_fraction, double k, int *low,
                       double *median)
{
    double *m = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    double *lm = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    int nm = 0, nlow = 0;
    for (int i = 0; m && lm && i < n; i++) {
        low[i] = 0;
        if (v[i] < 0)
            continue;
        m[nm] = v[i];
        lm[nm++] = log(v[i] > 1e-12 ? v[i] : 1e-12);
    }
    *median = 0;
    if (!m || !lm || nm < 3) { /* two figures cannot say which one is off */
        free(m);
        free(lm);
        return 0;
    }
    /* Bandwidth varies by factors, not by amounts: deviations are taken
     * on the log scale, so a host at a tenth of the others stands out
     * however noisy the healthy ones are in absolute terms. */
    double med = dl_median(m, (size_t)nm), lmed = dl_median(lm, (size_t)nm);
    double lmad = dl_mad(lm, (size_t)nm, lmed);
    /* Figures taken at different moments of a shared machine differ by
     * more than their MAD says when the group happens to agree closely:
     * the floor keeps a 20% dip of a tight group from being a fault. */
    if (lmad < DL_PF_LOG_MAD_FLOOR)
        lmad = DL_PF_LOG_MAD_FLOOR;
    for (int i = 0; i < n; i++) {
        if (v[i] < 0)
            continue;
        double lv = log(v[i] > 1e-12 ? v[i] : 1e-12);
        if (v[i] < min_fraction * med && lmed - lv > k * lmad)
            low[i] = 1, nlow++;
    }
    *median = med;
    free(m);
    free(lm);
    return nlow;
}
