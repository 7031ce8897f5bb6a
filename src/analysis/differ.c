/* What differs between two runs, the first question after "it is slower":
 * the recorded environment (NCCL_*, UCX_*, OMPI_MCA_* ...), an injected
 * fault, the profiles' settings, versions and driver, hosts, ranks and
 * GPUs, the backend, and the stragglers each run named. Each kind is one
 * collector in the table below: a new kind of difference is one more
 * entry there, and compare's text, JSON and HTML, and report, show it. */
#include "analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void dl_an_diff_add(dl_diffs_t *d, const char *kind, const char *what, const char *b,
                    const char *n)
{
    if (strcmp(b, n) == 0)
        return;
    if (DL_GROW(d->v, d->n, d->cap, 16) != DL_OK)
        return; /* out of memory: the list is shorter, never wrong */
    dl_diff_t *e = &d->v[d->n++];
    e->kind = kind;
    snprintf(e->what, sizeof(e->what), "%s", what);
    snprintf(e->base, sizeof(e->base), "%s", b);
    snprintf(e->cur, sizeof(e->cur), "%s", n);
}

/* A fact known on one side only is "less known", not a difference. */
static void known(dl_diffs_t *d, const char *kind, const char *what, const char *b, const char *n)
{
    size_t lb = strlen(b), ln = strlen(n), m = lb < ln ? lb : ln;
    if (!b[0] || !n[0] || (strncmp(b, n, m) == 0 && (b[m] == ' ' || n[m] == ' ')))
        return; /* "x" vs "x 1.2" is the same fact, more or less spelled out */
    dl_an_diff_add(d, kind, what, b, n);
}

static void versions(const dl_record_t *b, const dl_record_t *n, const char *kind, dl_diffs_t *d)
{
    known(d, kind, "tool", b->tool, n->tool);
    known(d, kind, "NCCL", b->nccl, n->nccl);
    known(d, kind, "CUDA", b->cuda, n->cuda);
    known(d, kind, "driver", b->driver, n->driver);
    known(d, kind, "MPI", b->mpi, n->mpi);
    known(d, kind, "kernel", b->kernel, n->kernel);
}

static void hosts(const dl_record_t *b, const dl_record_t *n, const char *kind, dl_diffs_t *d)
{
    char rb[192], rn[192];
    dl_an_ranks_text(b, rb, sizeof(rb));
    dl_an_ranks_text(n, rn, sizeof(rn));
    if (dl_an_run_ranks(b) != dl_an_run_ranks(n) || b->ranks != n->ranks)
        dl_an_diff_add(d, kind, "ranks", rb, rn);
    known(d, kind, "hosts", b->hosts, n->hosts);
    known(d, kind, "GPU", b->gpu, n->gpu);
    dl_an_diff_add(d, kind, "rank GPUs", b->rank_gpus, n->rank_gpus);
    known(d, kind, "backend", b->backend, n->backend);
    int mb = dl_an_run_ranks(b) != b->ranks || (b->nrows && b->rows[0].modelled);
    int mn = dl_an_run_ranks(n) != n->ranks || (n->nrows && n->rows[0].modelled);
    dl_an_diff_add(d, kind, "source", mb ? "modelled" : "measured", mn ? "modelled" : "measured");
}

/* Every recorded variable set on either side (nccl-tests keeps none):
 * DLCOMM_INJECT is its own kind, the rest the environment's. */
static void env_keys(const dl_record_t *b, const dl_record_t *n, dl_diffs_t *d, const char *kind,
                     int inject)
{
    if (b->fmt != DL_FMT_DLCOMM || n->fmt != DL_FMT_DLCOMM)
        return;
    for (size_t i = 0; i < b->nenv; i++)
        if ((strcmp(b->env[i].key, "DLCOMM_INJECT") == 0) == inject)
            dl_an_diff_add(d, kind, b->env[i].key, b->env[i].value, dl_an_env(n, b->env[i].key));
    for (size_t i = 0; i < n->nenv; i++)
        if ((strcmp(n->env[i].key, "DLCOMM_INJECT") == 0) == inject && !dl_an_env(b, n->env[i].key)[0])
            dl_an_diff_add(d, kind, n->env[i].key, "", n->env[i].value);
}

static void environment(const dl_record_t *b, const dl_record_t *n, const char *kind, dl_diffs_t *d)
{
    env_keys(b, n, d, kind, 0);
}

/* A fault planted on purpose: its figures are not the hardware's. */
static void injection(const dl_record_t *b, const dl_record_t *n, const char *kind, dl_diffs_t *d)
{
    env_keys(b, n, d, kind, 1);
}

static const char *prof_env(const dl_rec_profile_t *p, const char *k)
{
    for (size_t i = 0; p && i < p->nenv; i++)
        if (strcmp(p->env[i].key, k) == 0)
            return p->env[i].value;
    return "";
}

static const dl_rec_profile_t *prof_named(const dl_record_t *r, const char *name)
{
    for (size_t i = 0; i < r->nprofs; i++)
        if (strcmp(r->profs[i].name, name) == 0)
            return &r->profs[i];
    return NULL;
}

/* The settings of each profile both runs have ("default: NCCL_ALGO"). */
static void profiles(const dl_record_t *b, const dl_record_t *n, const char *kind, dl_diffs_t *d)
{
    for (size_t i = 0; i < n->nprofs; i++) {
        const dl_rec_profile_t *pn = &n->profs[i], *pb = prof_named(b, pn->name);
        if (!pb)
            continue;
        const dl_rec_profile_t *side[2] = {pb, pn};
        for (int s = 0; s < 2; s++)
            for (size_t k = 0; k < side[s]->nenv; k++) {
                const char *key = side[s]->env[k].key;
                if (s == 1 && prof_env(pb, key)[0])
                    continue;
                char what[96];
                snprintf(what, sizeof(what), "%.40s: %.50s", pn->name, key);
                dl_an_diff_add(d, kind, what, prof_env(pb, key), prof_env(pn, key));
            }
    }
}

static void strag_text(const dl_record_t *r, int rank, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < r->nstrag; i++)
        if (r->strag[i].rank == rank)
            snprintf(buf, len, "late in %d/%d rows by %.1f us", r->strag[i].rows,
                     r->strag[i].of_rows, r->strag[i].late_us);
    if (!buf[0] && r->has_strag)
        snprintf(buf, len, "not a straggler");
}

/* Each rank named on either side: new, or gone. */
static void stragglers(const dl_record_t *b, const dl_record_t *n, const char *kind, dl_diffs_t *d)
{
    const dl_record_t *side[2] = {b, n};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < side[s]->nstrag; i++) {
            const dl_strag_t *e = &side[s]->strag[i];
            char tb[128], tn[128], what[96];
            strag_text(b, e->rank, tb, sizeof(tb));
            strag_text(n, e->rank, tn, sizeof(tn));
            if (s == 1 && strcmp(tb, "not a straggler") != 0 && tb[0])
                continue; /* named in both: seen from base's side */
            snprintf(what, sizeof(what), "rank %d (%.60s)", e->rank, e->host);
            /* a change in lateness alone is noise; named or not is the news */
            int nb = strncmp(tb, "late", 4) == 0, nn = strncmp(tn, "late", 4) == 0;
            if (nb != nn)
                dl_an_diff_add(d, kind, what, tb[0] ? tb : "not judged",
                               tn[0] ? tn : "not judged");
        }
}

/* Not a collector of the table below: it needs the pairs (compare.c calls
 * it after pairing), so its entries come after the kinds that cause it. */
void dl_an_diff_choices(const dl_pair_t *p, size_t n, dl_diffs_t *d)
{
    size_t shown = 0, more = 0;
    for (size_t i = 0; i < n; i++) {
        const dl_row_t *r = p[i].cur;
        int seen = 0; /* one entry per profile, collective and size */
        for (size_t j = 0; j < i && !seen; j++)
            seen = p[j].choice_changed && p[j].cur->bytes == r->bytes &&
                   !strcmp(p[j].cur->profile, r->profile) &&
                   !strcmp(p[j].cur->collective, r->collective);
        if (!p[i].choice_changed || seen)
            continue;
        if (shown++ >= 16) {
            more++;
            continue;
        }
        char what[96], sz[32], cb[48], cn[48];
        dl_size_format(r->bytes, sz, sizeof(sz));
        snprintf(what, sizeof(what), "%.40s %.24s %.24s", r->profile, r->collective, sz);
        dl_row_choice_text(p[i].base, cb, sizeof(cb));
        dl_row_choice_text(r, cn, sizeof(cn));
        dl_an_diff_add(d, "choice", what, cb, cn);
    }
    if (more) {
        char n_more[96];
        snprintf(n_more, sizeof(n_more), "%zu more sizes differ (compare --json FILE: each row)", more);
        dl_an_diff_add(d, "choice", "more sizes", "", n_more);
    }
}

/* The kinds, in the order they are shown: the likeliest causes first. */
static const struct {
    const char *kind;
    void (*collect)(const dl_record_t *b, const dl_record_t *n, const char *kind, dl_diffs_t *d);
} kinds[] = {
    {"injection", injection},     {"environment", environment}, {"profile", profiles},
    {"stragglers", stragglers},   {"versions", versions},       {"hosts", hosts},
};

dl_status_t dl_an_diffs(const dl_record_t *b, const dl_record_t *n, dl_diffs_t *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t k = 0; k < DL_ARRAY_SIZE(kinds); k++)
        kinds[k].collect(b, n, kinds[k].kind, out);
    return DL_OK;
}

void dl_an_diffs_free(dl_diffs_t *d)
{
    free(d->v);
    memset(d, 0, sizeof(*d));
}
