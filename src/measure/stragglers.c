/* Stragglers over many rows: which ranks a sweep or a preflight names, and
 * why (late into the calls, or slow beside the other ranks of their host).
 * One rule for every command, so a rank the sweep names is the rank the
 * preflight names. */
#include "measure.h"

#include <stdlib.h>
#include <string.h>

/* Within each host of at least three ranks of the row: a rank whose own
 * mean time is above the host's median by more than DL_LATE_MAD_K MADs and
 * by more than a quarter of that median (and DL_LATE_FLOOR_S). A rank's own
 * time only stands out where its peers need not wait for it (a model, a
 * rooted or pipelined call); a rank that makes its peers wait shows as late. */
int dl_result_slow_ranks(const dl_result_t *r, const int *host_of, int *slow, double *ratio)
{
    int n = r->nranks, named = 0;
    for (int i = 0; i < n; i++) {
        slow[i] = 0;
        if (ratio)
            ratio[i] = 0;
    }
    if (!r->rank_mean_s || n < 3)
        return 0;
    double *v = malloc((size_t)n * sizeof(*v));
    if (!v)
        return 0;
    for (int i = 0; i < n; i++) {
        int h = host_of ? host_of[i] : 0, k = 0;
        for (int j = 0; j < n; j++)
            if ((host_of ? host_of[j] : 0) == h)
                v[k++] = r->rank_mean_s[j];
        if (k < 3)
            continue;
        double med = dl_median(v, (size_t)k), mad = dl_mad(v, (size_t)k, med);
        double floor = 0.25 * med > DL_LATE_FLOOR_S ? 0.25 * med : DL_LATE_FLOOR_S;
        double over = r->rank_mean_s[i] - med;
        if (over > DL_LATE_MAD_K * mad && over > floor) {
            slow[i] = 1, named++;
            if (ratio)
                ratio[i] = r->rank_mean_s[i] / med;
        }
    }
    free(v);
    return named;
}

/* host_of from the ranks' host names (each DL_RANK_NAME_LEN chars). */
static void hosts_from_names(int *host_of, const char *names, int n)
{
    for (int i = 0; i < n; i++) {
        host_of[i] = i;
        for (int j = 0; j < i && host_of[i] == i; j++)
            if (strncmp(names + (size_t)i * DL_RANK_NAME_LEN, names + (size_t)j * DL_RANK_NAME_LEN,
                        DL_RANK_NAME_LEN) == 0)
                host_of[i] = host_of[j];
    }
}

dl_status_t dl_rank_tally_init(dl_rank_tally_t *t, int nranks, const int *host_of,
                               const char *names)
{
    memset(t, 0, sizeof(*t));
    t->nranks = nranks;
    t->late_rows = calloc((size_t)nranks, sizeof(int));
    t->slow_rows = calloc((size_t)nranks, sizeof(int));
    t->late_sum = calloc((size_t)nranks, sizeof(double));
    t->slow_sum = calloc((size_t)nranks, sizeof(double));
    t->host_of = calloc((size_t)nranks, sizeof(int));
    if (!t->late_rows || !t->slow_rows || !t->late_sum || !t->slow_sum || !t->host_of) {
        dl_rank_tally_free(t);
        return DL_ERR_NOMEM;
    }
    if (host_of)
        memcpy(t->host_of, host_of, (size_t)nranks * sizeof(int));
    else if (names)
        hosts_from_names(t->host_of, names, nranks);
    return DL_OK;
}

void dl_rank_tally_free(dl_rank_tally_t *t)
{
    free(t->late_rows);
    free(t->slow_rows);
    free(t->late_sum);
    free(t->slow_sum);
    free(t->host_of);
    memset(t, 0, sizeof(*t));
}

/* The row's ranks as world ranks: with --split, its group's members. */
static int row_ranks(const dl_rank_tally_t *t, const dl_result_t *r, int *who)
{
    for (int i = 0; i < r->nranks; i++)
        who[i] = i;
    if (r->split.op == DL_SPLIT_NONE)
        return r->nranks == t->nranks;
    return r->split.world == t->nranks && dl_split_members(&r->split, r->group, who) == r->nranks;
}

/* The judged row's figures, added to each named rank. */
static void tally_named(dl_rank_tally_t *t, const dl_result_t *r, const int *who, int *hosts,
                        int *flag, double *ratio)
{
    int n = r->nranks;
    if (dl_result_stragglers(r, flag)) {
        double med = dl_median(r->rank_late_s, (size_t)n);
        for (int i = 0; i < n; i++)
            if (flag[i])
                t->late_rows[who[i]]++, t->late_sum[who[i]] += r->rank_late_s[i] - med;
    }
    for (int i = 0; i < n; i++)
        hosts[i] = t->host_of[who[i]];
    if (dl_result_slow_ranks(r, hosts, flag, ratio))
        for (int i = 0; i < n; i++)
            if (flag[i])
                t->slow_rows[who[i]]++, t->slow_sum[who[i]] += ratio[i];
}

void dl_rank_tally_add(dl_rank_tally_t *t, const dl_result_t *r)
{
    if (!t->late_rows || !r->rank_late_s || !r->rank_mean_s)
        return;
    int n = r->nranks;
    int *who = calloc((size_t)n, sizeof(int)), *hosts = calloc((size_t)n, sizeof(int));
    int *flag = calloc((size_t)n, sizeof(int));
    double *ratio = calloc((size_t)n, sizeof(double));
    /* Every --split group has the same rows: counted once, by group 0. */
    if (who && hosts && flag && ratio && row_ranks(t, r, who)) {
        t->rows += r->split.op == DL_SPLIT_NONE || r->group == 0;
        tally_named(t, r, who, hosts, flag, ratio);
    }
    free(who);
    free(hosts);
    free(flag);
    free(ratio);
}

int dl_rank_tally_named(const dl_rank_tally_t *t, int rank, dl_rank_why_t *why)
{
    memset(why, 0, sizeof(*why));
    if (!t->late_rows || rank < 0 || rank >= t->nranks || t->rows == 0)
        return 0;
    why->late_rows = t->late_rows[rank];
    why->slow_rows = t->slow_rows[rank];
    why->rows = t->rows;
    if (why->late_rows)
        why->late_s = t->late_sum[rank] / why->late_rows;
    if (why->slow_rows)
        why->slow_ratio = t->slow_sum[rank] / why->slow_rows;
    /* Named on average, not once on a busy host. */
    return (why->late_rows && 2 * why->late_rows >= t->rows) ||
           (why->slow_rows && 2 * why->slow_rows >= t->rows);
}

int dl_rank_why_text(const dl_rank_why_t *w, const char *rows, char *buf, size_t len)
{
    int n = 0;
    buf[0] = '\0';
    if (w->late_rows && 2 * w->late_rows >= w->rows)
        n = snprintf(buf, len, "late in %d/%d %s by %.1f us", w->late_rows, w->rows, rows,
                     w->late_s * 1e6);
    if (w->slow_rows && 2 * w->slow_rows >= w->rows && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "%sslow in %d/%d %s (%.2fx its host's median "
                      "time)", n ? ", " : "", w->slow_rows, w->rows, rows, w->slow_ratio);
    return n;
}
