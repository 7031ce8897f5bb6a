/* compare: pairs the rows of two runs by (profile, collective, dtype, op,
 * placement, bytes, ranks) and gives each pair a noise-aware verdict. */
#include "analysis.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

const char *dl_verdict_str(dl_verdict_t v)
{
    static const char *const s[] = {"unchanged", "noise", "improvement", "regression"};
    return v <= DL_V_REGRESSION ? s[v] : "?";
}

/* A change counts only when it passes the threshold AND the difference of
 * the means lies outside the 95% interval of that difference, estimated as
 * sqrt(ci_base^2 + ci_new^2) (the half-widths of the two means' intervals,
 * combined as independent errors). Without a spread (nccl-tests keeps none)
 * the threshold alone decides. */
dl_verdict_t dl_an_verdict(double change, double thr, double d_us, double spread_us)
{
    if (!(fabs(change) > thr))
        return DL_V_UNCHANGED;
    if (isfinite(spread_us) && !(d_us > spread_us))
        return DL_V_NOISE;
    return change > 0 ? DL_V_REGRESSION : DL_V_IMPROVEMENT;
}

static int cmp_ptr(const void *a, const void *b, void *with_profile)
{
    return dl_an_row_cmp(*(const dl_row_t *const *)a, *(const dl_row_t *const *)b,
                         *(const int *)with_profile);
}

static const char *const stat_names[] = {"mean", "p50"};
const dl_choices_t dl_an_stat_choices = {.noun = "statistic", .names = stat_names, .n = 2};

/* The base row with key's identity, or NULL (idx sorted by cmp_ptr). */
static const dl_row_t *find(const dl_row_t **idx, size_t n, const dl_row_t *key, int with_profile)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = dl_an_row_cmp(idx[mid], key, with_profile);
        if (c == 0)
            return idx[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int distinct_profile(const dl_record_t *r)
{
    for (size_t i = 1; i < r->nrows; i++)
        if (strcmp(r->rows[i].profile, r->rows[0].profile))
            return 0;
    return r->nrows > 0;
}

/* The one-line summary of the differences (differ.c). */
static void summarise_differences(dl_cmp_t *c)
{
    size_t len = 0;
    for (size_t i = 0; i < c->diffs.n && len < sizeof(c->warnings); i++) {
        const dl_diff_t *d = &c->diffs.v[i];
        len += (size_t)snprintf(c->warnings + len, sizeof(c->warnings) - len, "%s%s %s vs %s",
                                len ? "; " : "", d->what, d->base[0] ? d->base : "(unset)",
                                d->cur[0] ? d->cur : "(unset)");
    }
}

int dl_an_still_running(const dl_record_t *r)
{
    /* No exit code yet, and the folder's .dlcomm.lock held: the run that
     * claimed it is alive and writing. Without the lock held it ended
     * without a word (killed). */
    if (r->fmt != DL_FMT_DLCOMM || r->exit_code >= 0)
        return 0;
    char lock[sizeof(r->path) + 16];
    const char *slash = strrchr(r->path, '/');
    snprintf(lock, sizeof(lock), "%.*s.dlcomm.lock", slash ? (int)(slash - r->path + 1) : 0,
             r->path);
    int fd = open(lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return 0;
    int held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd); /* and with it the shared lock, at once */
    return held;
}

static void add_to(char *list, size_t cap, const dl_rec_profile_t *p, const char *what)
{
    size_t len = strlen(list);
    snprintf(list + len, cap - len, "%s%s: ok -> %s%s%s", len ? "; " : "", p->name, what,
             p->reason[0] ? " " : "", p->reason);
}

/* A profile that finished in base but timed out, crashed or failed in new
 * is worse whatever its figures say; one that finished with wrong data is
 * worse too, and said as such (it did finish). */
static void profile_failures(const dl_record_t *b, const dl_record_t *n, dl_cmp_t *c)
{
    for (size_t i = 0; i < n->nprofs; i++) {
        const dl_rec_profile_t *pn = &n->profs[i];
        for (size_t j = 0; j < b->nprofs; j++) {
            const dl_rec_profile_t *pb = &b->profs[j];
            if (strcmp(pb->name, pn->name) || pb->status != DL_REC_OK ||
                !dl_rec_status_failed(pn->status))
                continue;
            if (pn->status == DL_REC_WRONG) {
                add_to(c->wrong_profiles, sizeof(c->wrong_profiles), pn, "wrong");
                c->wrong_profs++;
                continue;
            }
            add_to(c->failures, sizeof(c->failures), pn,
                   pn->status == DL_REC_RUNNING ? "running (never finished: the run ended "
                                                  "without writing its end, killed?)"
                                                : dl_rec_status_name(pn->status));
            c->failed++;
        }
    }
}

/* The time a pair is judged by: the mean (nccl-tests' convention, and what
 * busbw comes from) or, with --stat p50, the median call; bandwidth scales
 * as 1 / time. The median's spread is taken as 1.25 x the mean's (the
 * asymptotic ratio of their standard errors for normal samples). */
static double stat_time(const dl_row_t *r, int p50, double *scale)
{
    *scale = 1;
    if (p50 && r->p50_us > 0) {
        *scale = 1.2533;
        return r->p50_us;
    }
    return r->time_us;
}

static void judge(dl_pair_t *p, const dl_cmp_opts_t *o, dl_cmp_t *c)
{
    const dl_row_t *b = p->base, *n = p->cur;
    c->wrong_rows += n->wrong > 0;
    double kb, kn, tb = stat_time(b, o->use_p50, &kb), tn = stat_time(n, o->use_p50, &kn);
    if (o->use_p50 && (kb == 1 || kn == 1)) { /* a side without a median: both by mean */
        tb = b->time_us, tn = n->time_us, kb = kn = 1;
        c->no_p50++;
    }
    p->metric = o->metric;
    if (p->metric == DL_M_BUSBW && !(b->busbw > 0 && n->busbw > 0)) {
        p->metric = DL_M_TIME; /* 1-rank runs: busbw is 0 by definition */
        c->fallback++;
    }
    if (p->metric == DL_M_BUSBW) {
        p->vb = b->busbw * b->time_us / tb;
        p->vn = n->busbw * n->time_us / tn;
        p->change = (p->vb - p->vn) / p->vb;
    } else {
        p->vb = tb;
        p->vn = tn;
        p->change = p->vb > 0 ? (p->vn - p->vb) / p->vb : 0;
    }
    double sb = kb * dl_an_spread(b), sn = kn * dl_an_spread(n);
    p->spread_us = isfinite(sb) && isfinite(sn) ? sqrt(sb * sb + sn * sn) : NAN;
    if (!isfinite(p->spread_us))
        c->unknown_spread++;
    p->verdict = dl_an_verdict(p->change, o->threshold, fabs(tn - tb), p->spread_us);
    if (!isfinite(p->change)) /* a time that is missing on one side */
        p->verdict = DL_V_UNCHANGED, p->change = 0;
    c->count[p->verdict]++;
}

static dl_status_t index_rows(const dl_record_t *r, int with_profile, const dl_row_t ***out)
{
    const dl_row_t **v = malloc((r->nrows ? r->nrows : 1) * sizeof(*v));
    if (!v)
        return DL_ERR_NOMEM;
    for (size_t i = 0; i < r->nrows; i++)
        v[i] = &r->rows[i];
    qsort_r(v, r->nrows, sizeof(*v), cmp_ptr, &with_profile);
    *out = v;
    return DL_OK;
}

dl_status_t dl_an_compare(const dl_record_t *b, const dl_record_t *n, const dl_cmp_opts_t *o,
                          dl_cmp_t *c)
{
    memset(c, 0, sizeof(*c));
    dl_an_diffs(b, n, &c->diffs);
    profile_failures(b, n, c);
    c->profiles_merged = distinct_profile(b) && distinct_profile(n) &&
                         strcmp(b->rows[0].profile, n->rows[0].profile) != 0;
    /* Pairs by the size asked for where both runs say it: a rounded size
     * is one row, whatever it rounded to. */
    int with_profile = (c->profiles_merged ? 0 : DL_ROW_PROFILE) |
                       (b->fmt == DL_FMT_DLCOMM && n->fmt == DL_FMT_DLCOMM ? DL_ROW_ASKED : 0);
    const dl_row_t **idx;
    if (index_rows(b, with_profile, &idx) != DL_OK)
        return DL_ERR_NOMEM;
    if (!(c->pairs = malloc((n->nrows + 1) * sizeof(dl_pair_t)))) {
        free(idx);
        return DL_ERR_NOMEM;
    }
    char *matched = calloc(b->nrows + 1, 1);
    if (!matched) {
        free(idx);
        free(c->pairs);
        c->pairs = NULL;
        return DL_ERR_NOMEM;
    }
    for (size_t i = 0; i < n->nrows; i++) {
        const dl_row_t *key = &n->rows[i];
        const dl_row_t *hit = find(idx, b->nrows, key, with_profile);
        if (!hit) {
            c->only_new++;
            continue;
        }
        if (matched)
            matched[hit - b->rows] = 1;
        if (key->bytes < o->min_size) {
            c->small++;
            continue;
        }
        dl_pair_t *p = &c->pairs[c->npairs++];
        p->base = hit;
        p->cur = key;
        judge(p, o, c);
        p->choice_changed = dl_row_choice_differs(hit, key);
    }
    for (size_t i = 0; matched && i < b->nrows; i++)
        c->only_base += !matched[i];
    free(matched);
    free(idx);
    dl_an_diff_choices(c->pairs, c->npairs, &c->diffs);
    summarise_differences(c);
    return DL_OK;
}

int dl_an_cmp_regressed(const dl_cmp_t *c)
{
    return c->count[DL_V_REGRESSION] || c->failed || c->wrong_rows || c->wrong_profs;
}

void dl_an_cmp_free(dl_cmp_t *c)
{
    free(c->pairs);
    c->pairs = NULL;
    dl_an_diffs_free(&c->diffs);
}
