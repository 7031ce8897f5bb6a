/* The text table nccl-tests prints on stdout, of every version from 2.0.
 * A file is read by its header line ("#  size  count  type  redop  root
 * time  algbw ..."), never by counting words, because the columns moved:
 *
 * - up to 2.11 each test printed its own header: all_gather, sendrecv and
 *   hypercube have no redop, broadcast, gather and scatter a root but no
 *   redop, and the fourth figure of a side is "error", the largest
 *   difference from the expected value (5e-07), not a count of wrong
 *   elements; from 2.13 every test prints redop and root, and "#wrong";
 * - -I 1 (2.19) adds four per-iteration figures to each side, -S 1 a date
 *   and a time at the end of a row, and -C 1 prints "cputime" (the host's
 *   time per call) where the time was: such a file is refused;
 * - "# Collective test starting:" exists from 2.16.7: before it the
 *   collective comes from the file name, or from the columns where only
 *   one test prints them (reduce), or the file is refused;
 * - rank lines are "#   Rank  0 Pid" up to 2.13.3, "#  Rank  0 Group" after.
 *
 * Header-less text (rows alone) is read in the 2.13+ layout. */
#include "analysis.h"
#include "ncclt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NCCLT_MAXTOK 48

/* Where a row's figures are: column indexes (-1: none), counted from 0. */
typedef struct {
    int ncol;             /* words in a row, the timestamp's aside */
    int type, redop, root;
    int place[2];         /* out-of-place's and in-place's time column */
    int delta;            /* "error" (max difference), not "#wrong" (a count) */
    int stamp;            /* -S 1: "YYYY-mm-dd HH:MM:SS" ends each row */
    int cputime;          /* -C 1 */
    int seen;             /* a header line was read */
} ncclt_cols_t;

typedef struct {
    ncclt_cols_t c;
    char coll[32];
    int iters, oob;
} ncclt_text_t;

static const ncclt_cols_t layout_213 = {.ncol = 13, .type = 2, .redop = 3, .root = 4,
                                        .place = {5, 9}};

static int split_words(char *line, char **tok)
{
    char *save = NULL;
    int n = 0;
    for (char *t = strtok_r(line, " \t\r", &save); t && n < NCCLT_MAXTOK;
         t = strtok_r(NULL, " \t\r", &save))
        tok[n++] = t;
    return n;
}

/* The header line's words into c; 0 when line is not the header. */
static int text_cols(const char *line, ncclt_cols_t *c)
{
    char buf[1024], *tok[NCCLT_MAXTOK];
    snprintf(buf, sizeof(buf), "%s", line + 1);
    int n = split_words(buf, tok);
    if (n < 2 || strcmp(tok[0], "size") != 0 || strcmp(tok[1], "count") != 0)
        return 0;
    ncclt_cols_t x = {.type = -1, .redop = -1, .root = -1, .place = {-1, -1}, .seen = 1};
    int k = 0;
    for (int i = 0; i < n; i++) {
        const char *t = tok[i];
        if (strcmp(t, "timestamp") == 0)
            x.stamp = 1;
        else if (strcmp(t, "type") == 0)
            x.type = i;
        else if (strcmp(t, "redop") == 0)
            x.redop = i;
        else if (strcmp(t, "root") == 0)
            x.root = i;
        else if (strcmp(t, "error") == 0)
            x.delta = 1;
        else if ((strcmp(t, "time") == 0 || strcmp(t, "cputime") == 0) && k < 2) {
            x.cputime |= t[0] == 'c';
            x.place[k++] = i;
        }
    }
    x.ncol = n - x.stamp;
    *c = x;
    return 1;
}

static int parse_num(const char *s, double *v)
{
    char *end;
    if (strcmp(s, "N/A") == 0) {
        *v = NAN;
        return 1;
    }
    *v = strtod(s, &end);
    return end != s && *end == '\0' && !isinf(*v);
}

/* A table row in the layout c; anything else (NCCL's own lines) is skipped. */
static dl_status_t text_row(dl_record_t *r, char *line, const ncclt_text_t *t)
{
    const ncclt_cols_t *c = &t->c;
    char *tok[NCCLT_MAXTOK];
    int n = split_words(line, tok);
    if (n != c->ncol + (c->stamp ? 2 : 0) || c->place[1] < 0 || c->place[1] + 3 >= c->ncol)
        return DL_OK;
    double size, count, v[2][4];
    if (!parse_num(tok[0], &size) || !parse_num(tok[1], &count) || !(size >= 0 && size < 1.8e19))
        return DL_OK;
    for (int i = 0; i < 8; i++)
        if (!parse_num(tok[c->place[i / 4] + i % 4], &v[i / 4][i % 4]))
            return DL_OK;
    if (c->delta) /* a difference, not a count: the rows say "not checked" */
        v[0][3] = v[1][3] = NAN;
    dl_row_t row;
    dl_rec_row_init(&row);
    snprintf(row.profile, sizeof(row.profile), "nccl-tests");
    snprintf(row.collective, sizeof(row.collective), "%s", t->coll);
    dl_an_ncclt_dtype(c->type >= 0 ? tok[c->type] : "?", row.dtype, sizeof(row.dtype));
    snprintf(row.op, sizeof(row.op), "%s", c->redop >= 0 ? tok[c->redop] : "none");
    row.bytes = (uint64_t)size;
    row.ranks = r->ranks ? r->ranks : 1;
    return dl_ncclt_add_pair(r, &row, v);
}

/* "#   Rank  0 Pid ..." (to 2.13.3) and "#  Rank  0 Group  0 Pid ..." alike. */
static void text_rank(dl_record_t *r, const char *line)
{
    int rank;
    char host[128];
    const char *p;
    if (sscanf(line, "# Rank %d", &rank) == 1 && (p = strstr(line, " on ")) &&
        sscanf(p + 4, " %127s", host) == 1) {
        dl_ncclt_add_host(r, host);
        r->ranks++;
    }
}

static void text_header(dl_record_t *r, const char *line, ncclt_text_t *t)
{
    const char *p;
    char word[128];
    if ((p = strstr(line, "Collective test starting:")) && sscanf(p + 25, " %127s", word) == 1)
        dl_an_ncclt_coll(word, t->coll, sizeof(t->coll));
    if ((p = strstr(line, "nccl-tests version ")) && sscanf(p + 19, "%31s", word) == 1)
        snprintf(r->tool, sizeof(r->tool), "nccl-tests %.30s", word);
    if ((p = strstr(line, "nccl-library=")))
        dl_ncclt_nccl_code(strtod(p + 13, NULL), r->nccl, sizeof(r->nccl));
    if ((p = strstr(line, " iters: ")))
        t->iters = atoi(p + 8);
    if ((p = strstr(line, "Out of bounds values :")))
        t->oob = atoi(p + 22);
    text_cols(line, &t->c);
    text_rank(r, line);
}

/* A collective's nccl-tests name in the file's name ("v216_all_reduce.log"),
 * as a word of its own; the longer names first (all_reduce before reduce). */
static int coll_from_name(const char *path, char *out, size_t len)
{
    static const char *const names[] = {"reduce_scatter", "all_reduce", "all_gather", "alltoallv",
                                        "alltoall",       "sendrecv",   "broadcast",  "hypercube",
                                        "scatter",        "gather",     "reduce"};
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < DL_ARRAY_SIZE(names); i++) {
        size_t n = strlen(names[i]);
        for (const char *p = base; (p = strstr(p, names[i])); p++) {
            int before = p == base || !(p[-1] >= 'a' && p[-1] <= 'z');
            int after = !(p[n] >= 'a' && p[n] <= 'z');
            if (before && after) {
                dl_an_ncclt_coll(names[i], out, len);
                return 1;
            }
        }
    }
    return 0;
}

/* How many runs the text holds: each version prints "# nThread" and the
 * header once a run, 2.16.7 on also "Collective test starting". */
int dl_an_ncclt_runs(const char *buf)
{
    static const char *const marks[] = {"# nThread ", "Collective test starting:", "# Using devices"};
    int most = 0;
    for (size_t i = 0; i < DL_ARRAY_SIZE(marks); i++) {
        int n = 0;
        for (const char *q = buf; (q = strstr(q, marks[i])); q++)
            n++;
        most = n > most ? n : most;
    }
    return most;
}

/* After the text: what the table could not say for itself. */
static dl_status_t text_finish(dl_record_t *r, ncclt_text_t *t)
{
    if (t->c.cputime) {
        dl_err("%s: nccl-tests ran with -C 1 (cputime: the host's time per call, not the "
               "collective's); rerun it without -C to compare its times", r->path);
        return DL_ERR_INPUT;
    }
    if (r->nrows == 0) {
        dl_err("%s: not a dlcomm run.json, nccl-tests JSON or nccl-tests output", r->path);
        return DL_ERR_INPUT;
    }
    if (strcmp(t->coll, "unknown") == 0) {
        dl_err("%s: this nccl-tests output does not name its collective (\"# Collective test "
               "starting\" is printed from 2.16.7 on); name the file after it, as "
               "all_reduce_perf.txt", r->path);
        return DL_ERR_INPUT;
    }
    for (size_t i = 0; i < r->nrows; i++)
        r->rows[i].iterations = t->iters > 0 ? t->iters : 0;
    if (t->c.delta && t->oob > 0 && r->nprofs) { /* its own check failed */
        r->profs[0].status = DL_REC_WRONG;
        snprintf(r->profs[0].reason, sizeof(r->profs[0].reason),
                 "nccl-tests counted %d out-of-bounds values", t->oob);
    }
    if (!r->tool[0])
        snprintf(r->tool, sizeof(r->tool), "nccl-tests");
    return DL_OK;
}

static void name_rows(dl_record_t *r, const char *coll)
{
    for (size_t i = 0; i < r->nrows; i++)
        snprintf(r->rows[i].collective, sizeof(r->rows[i].collective), "%s", coll);
}

/* Where run k (from 1) of a log starts and ends: each run's first line is
 * "# nThread ...". NULL when the log cannot be cut there (a run without
 * that line), or has no run k. */
static const char *run_part(const char *buf, int k, const char **end)
{
    static const char mark[] = "# nThread ";
    int n = 0;
    const char *start = NULL;
    for (const char *q = buf; (q = strstr(q, mark)); q++)
        if (q == buf || q[-1] == '\n') {
            n++;
            if (n == k)
                start = q;
            else if (n == k + 1)
                *end = q;
        }
    return n == dl_an_ncclt_runs(buf) ? start : NULL;
}

/* A log holding several runs is read one run at a time (FILE@K): two runs
 * together would count every rank twice and mix their rows. */
static dl_status_t pick_run(const char **buf, const char **end, dl_record_t *r)
{
    int runs = dl_an_ncclt_runs(*buf);
    *end = NULL;
    if (r->part == 0 && runs > 1) {
        dl_err("%s: holds %d nccl-tests runs (a concatenated or CI log): name one as %s@1 .. "
               "%s@%d (history reads every one)", r->path, runs, r->path, r->path, runs);
        return DL_ERR_INPUT;
    }
    if (r->part == 0 || (r->part == 1 && runs <= 1))
        return DL_OK;
    const char *p = run_part(*buf, r->part, end);
    if (!p) {
        dl_err("%s@%d: the log holds %d nccl-tests run%s%s", r->path, r->part, runs,
               runs == 1 ? "" : "s", r->part <= runs ? ", not each starting with its \"# nThread\" "
               "line" : "");
        return DL_ERR_INPUT;
    }
    *buf = p;
    return DL_OK;
}

dl_status_t dl_an_read_ncclt_text(const char *buf, dl_record_t *r)
{
    ncclt_text_t t = {.c = layout_213, .coll = "unknown"};
    char line[1024];
    const char *end;
    dl_status_t st = pick_run(&buf, &end, r);
    for (const char *p = buf; *p && st == DL_OK && (!end || p < end);) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
        p += len + (nl ? 1 : 0);
        if (line[0] == '#') {
            text_header(r, line, &t);
            continue;
        }
        if (r->nprofs == 0 && !dl_ncclt_prof(r))
            return DL_ERR_NOMEM;
        st = text_row(r, line, &t);
    }
    if (st != DL_OK)
        return st;
    if (strcmp(t.coll, "unknown") == 0 && !coll_from_name(r->path, t.coll, sizeof(t.coll)) &&
        t.c.redop >= 0 && t.c.root >= 0 && t.c.delta)
        snprintf(t.coll, sizeof(t.coll), "reduce"); /* up to 2.11, only reduce has both */
    name_rows(r, t.coll);
    return text_finish(r, &t);
}
