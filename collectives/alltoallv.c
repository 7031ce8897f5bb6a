/* all-to-all-v: rank i sends c(i,j) elements to rank j, packed in rank
 * order on both sides. c comes from a matrix file (sweep --matrix: the file
 * nccl-tests' NCCL_TESTS_ALLTOALLV_MATRIX_FILE takes: a square matrix of
 * whitespace-separated byte counts, cell [i][j] what rank i sends to rank
 * j, at least nranks rows, the first nranks used, each cell rounded down to
 * 16 bytes; the sizes of the sweep are then not used), else from the size:
 * nccl-tests' generated pattern at full spread, rank i sends to rank i+d
 * (mod n) d/S of the size (S = n(n-1)/2) and nothing to itself; dlcomm
 * rounds to whole elements, at least one to each peer. The row's size is
 * the largest per-rank send or receive total; busbw factor (n-1)/n. */
#include "common.h"
#include "../src/util/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t *g_mat; /* bytes, g_dim x g_dim */
static int g_dim, g_loaded;

void dl_alltoallv_matrix_free(void)
{
    free(g_mat);
    g_mat = NULL;
    g_dim = 0;
    g_loaded = 0;
}

int dl_alltoallv_matrix_load(const char *path, int nranks)
{
    dl_alltoallv_matrix_free();
    g_loaded = 1;
    /* A whole regular file, as every input (a FIFO blocked here forever). */
    char *text = NULL;
    size_t len = 0;
    if (dl_read_file(path, &text, &len) != DL_OK || !len) {
        dl_err("--matrix %s: %s", path, text ? "an empty file" : dl_read_error());
        free(text);
        return DL_ERR_INPUT;
    }
    FILE *f = fmemopen(text, len, "r");
    if (!f) {
        free(text);
        return DL_ERR_NOMEM;
    }
    size_t cap = 0, n = 0;
    int rows = 0, cols = -1, in_row = 0, ch;
    uint64_t *v = NULL;
    char tok[64];
    size_t tl = 0;
    dl_status_t st = DL_OK;
    for (;;) {
        ch = fgetc(f);
        if (ch != EOF && !isspace(ch)) {
            if (tl + 1 >= sizeof(tok)) {
                dl_err("--matrix %s: row %d: a value too long", path, rows + 1);
                st = DL_ERR_INPUT;
                break;
            }
            tok[tl++] = (char)ch;
            continue;
        }
        if (tl) { /* a value ends */
            tok[tl] = '\0';
            tl = 0;
            char *end;
            errno = 0;
            double d = strtod(tok, &end);
            if (end == tok || *end || errno || !(d >= 0) || d > 1e18) { /* NULs: no digits */
                dl_err("--matrix %s: row %d: '%s' is not a byte count", path, rows + 1, tok);
                st = DL_ERR_INPUT;
                break;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                uint64_t *nv = realloc(v, cap * sizeof(*v));
                if (!nv) {
                    st = DL_ERR_NOMEM;
                    break;
                }
                v = nv;
            }
            v[n++] = (uint64_t)d & ~(uint64_t)15;
            in_row++;
        }
        if ((ch == '\n' || ch == EOF) && in_row) {
            if (cols >= 0 && in_row != cols) {
                dl_err("--matrix %s: row %d has %d values, row 1 has %d", path, rows + 1, in_row, cols);
                st = DL_ERR_INPUT;
                break;
            }
            cols = in_row;
            in_row = 0;
            rows++;
        }
        if (ch == EOF)
            break;
    }
    fclose(f);
    free(text);
    if (st == DL_OK && (rows == 0 || rows != cols)) {
        dl_err("--matrix %s: not a square matrix (%d rows of %d values)", path, rows, cols < 0 ? 0 : cols);
        st = DL_ERR_INPUT;
    }
    if (st == DL_OK && rows < nranks) {
        dl_err("--matrix %s: %d rows, fewer than the %d ranks", path, rows, nranks);
        st = DL_ERR_INPUT;
    }
    if (st != DL_OK) {
        free(v);
        return st;
    }
    g_mat = v;
    g_dim = rows;
    return DL_OK;
}

/* Workers get the sweep's matrix through their environment. */
static void load_once(int nranks)
{
    if (g_loaded)
        return;
    const char *p = getenv(DL_ALLTOALLV_MATRIX_ENV);
    g_loaded = 1;
    if (p && *p && dl_alltoallv_matrix_load(p, nranks) != DL_OK)
        dl_warn("alltoallv: the matrix could not be read again; the generated pattern is used");
}

int dl_alltoallv_has_matrix(void) { return g_mat != NULL; }

size_t dl_alltoallv_count(int src, int dst, int nranks, uint64_t bytes, size_t esize)
{
    load_once(nranks);
    if (g_mat)
        return (size_t)(g_mat[(size_t)src * g_dim + dst] / esize);
    if (nranks == 1)
        return dl_whole(bytes, esize);
    int d = (dst - src + nranks) % nranks;
    if (d == 0)
        return 0;
    uint64_t total = bytes / esize, s = (uint64_t)nranks * (nranks - 1) / 2;
    size_t c = (size_t)((uint64_t)d * total / s);
    return c ? c : 1;
}

size_t *dl_alltoallv_offsets(uint64_t bytes, size_t esize, int nranks, int rank)
{
    size_t *v = malloc((2 * (size_t)nranks + 1) * sizeof(*v));
    if (!v)
        return NULL;
    v[0] = 0;
    for (int j = 0; j < nranks; j++) {
        v[j + 1] = v[j] + dl_alltoallv_count(j, rank, nranks, bytes, esize);
        size_t off = 0;
        for (int k = 0; k < rank; k++)
            off += dl_alltoallv_count(j, k, nranks, bytes, esize);
        v[nranks + 1 + j] = off;
    }
    return v;
}

static void counts(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *o)
{
    size_t send = 0, recv = 0, most = 0;
    for (int i = 0; i < nranks; i++) {
        size_t s = 0, r = 0;
        for (int j = 0; j < nranks; j++) {
            s += dl_alltoallv_count(i, j, nranks, bytes, esize);
            r += dl_alltoallv_count(j, i, nranks, bytes, esize);
        }
        if (i == rank) {
            send = s;
            recv = r;
        }
        most = s > most ? s : most;
        most = r > most ? r : most;
    }
    *o = (dl_counts_t){.send_count = send, .recv_count = recv, .param_count = 0,
                       .bytes = most * esize, .requested = bytes};
}

const dl_coll_t dl_coll_alltoallv = {"alltoallv", DL_COLL_ALLTOALLV, 0, 0, dl_factor_nm1_n, counts};
