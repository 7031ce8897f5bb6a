/*
 * collectives: what each collective is, independent of who runs it.
 * One small file per collective gives its name, how element counts and
 * buffer sizes follow from a requested size and a rank count, its bus
 * bandwidth factor (the nccl-tests convention), and the value every
 * received element must hold. Data types and reduction ops live here too,
 * with the fill pattern whose reduction is exact in every dtype.
 *
 * Adding a collective: a line in DL_COLL_LIST and its case in
 * dl_expected_source (pattern.h), one file collectives/<name>.c defining
 * dl_coll_<name> (CMakeLists.txt globs the folder), and the call
 * in each backend's switch (src/backends/mpi.c call_once, nccl.c enqueue;
 * sim.c model_us only if its step count differs from a ring's n-1).
 */
#ifndef DL_COLLECTIVES_H
#define DL_COLLECTIVES_H

#include <stddef.h>
#include <stdint.h>

#include "pattern.h" /* dl_coll_id_t, from DL_COLL_LIST */

typedef enum {
    DL_DT_FLOAT32,
    DL_DT_FLOAT16,
    DL_DT_BFLOAT16,
    DL_DT_FLOAT64,
    DL_DT_INT32,
    DL_DT_INT8,
    DL_DT_UINT8,
    DL_DT_INT64,
    DL_DT_UINT32,
    DL_DT_UINT64,
    DL_DT_FP8E4M3,
    DL_DT_FP8E5M2,
    DL_DT_COUNT
} dl_dtype_t;

typedef enum { DL_OP_SUM, DL_OP_PROD, DL_OP_MIN, DL_OP_MAX, DL_OP_AVG, DL_OP_COUNT } dl_op_t;

typedef enum { DL_PLACE_OUT = 0, DL_PLACE_IN = 1 } dl_place_t;

/* Element counts of one collective call at one size. */
typedef struct {
    size_t send_count;   /* elements in the send buffer */
    size_t recv_count;   /* elements in the receive buffer */
    size_t param_count;  /* the count passed to the library call */
    size_t bytes;        /* the size the row reports (nccl-tests' "size") */
    /* In-place: one buffer of max(send, recv) elements; where the send data
     * and the result live inside it (elements). */
    size_t inplace_send_offset;
    size_t inplace_recv_offset;
    uint64_t requested;  /* the size asked for (all-to-all-v's counts follow from it) */
} dl_counts_t;

typedef struct dl_coll {
    const char *name;
    dl_coll_id_t id;
    int has_op;   /* takes a reduction op */
    int has_root; /* takes a root */
    /* busbw = algbw * factor(nranks) */
    double (*busbw_factor)(int nranks);
    /* Requested bytes -> counts. Sizes are rounded down to a whole number of
     * elements (and of ranks where the collective divides the buffer), but
     * never below one element per rank. */
    void (*counts)(uint64_t bytes, size_t esize, int nranks, int rank, dl_counts_t *out);
} dl_coll_t;

/* Value the result of `rank` must hold at index i (the mapping lives in
 * pattern.h, shared with the device check). Returns 0 when that element is
 * not defined by the collective (reduce, non-root). */
int dl_coll_expected(const dl_coll_t *c, dl_dtype_t dt, dl_op_t op, int rank, int nranks,
                     int root, const dl_counts_t *cnt, size_t i, double *value);

extern const dl_coll_t *const dl_colls[DL_COLL_COUNT];
extern const char *const dl_coll_names[DL_COLL_COUNT];
extern const char *const dl_dtype_names[DL_DT_COUNT];
extern const char *const dl_op_names[DL_OP_COUNT];

const dl_coll_t *dl_coll_find(const char *name);
size_t dl_dtype_size(dl_dtype_t dt);
int dl_dtype_is_float(dl_dtype_t dt);

/* all-to-all-v's counts (collectives/alltoallv.c). The matrix, once loaded
 * (a bad file: one line, DL_ERR_INPUT, exit 2), holds for the process; a
 * worker loads the file named by DL_ALLTOALLV_MATRIX_ENV on first use. */
#define DL_ALLTOALLV_MATRIX_ENV "DLCOMM_ALLTOALLV_MATRIX"
int dl_alltoallv_matrix_load(const char *path, int nranks); /* a dl_status_t */
void dl_alltoallv_matrix_free(void);
int dl_alltoallv_has_matrix(void);
/* Elements rank src sends to rank dst at a requested size. */
size_t dl_alltoallv_count(int src, int dst, int nranks, uint64_t bytes, size_t esize);
/* The voff table of dl_expected_source for rank (malloc'd, 2n+1 entries). */
size_t *dl_alltoallv_offsets(uint64_t bytes, size_t esize, int nranks, int rank);

/* Default collectives when -c is not given: allreduce, allgather, broadcast. */
#define DL_COLL_DEFAULT_MASK \
    ((1u << DL_COLL_ALLREDUCE) | (1u << DL_COLL_ALLGATHER) | (1u << DL_COLL_BROADCAST))

/* The fill pattern: the value rank r puts at send index i. Small integers
 * (within [-1, 100]) so that every partial reduction is exact in every dtype
 * up to 256 ranks (bfloat16's integer limit) — sum uses {0,1}, prod {1,-1},
 * min/max [0,15], avg the same value on every rank. Non-reducing
 * collectives use (i + 7r) mod 101 so a block from the wrong rank shows.
 * fp8 types use narrower ranges (their integers are exact only up to 8/16). */
double dl_pattern(dl_dtype_t dt, int reduces, dl_op_t op, int rank, size_t i);
/* Reduction of the pattern over all ranks at global index i. */
double dl_pattern_reduced(dl_dtype_t dt, dl_op_t op, int nranks, size_t i);
/* The pattern's period in i for reductions: expected values repeat. */
#define DL_PATTERN_PERIOD 64

/* Host conversions between a double and one element of dtype. */
void dl_value_store(dl_dtype_t dt, void *dst, size_t i, double v);
double dl_value_load(dl_dtype_t dt, const void *src, size_t i);
uint16_t dl_f32_to_f16(float f);
float dl_f16_to_f32(uint16_t h);
uint16_t dl_f32_to_bf16(float f);
float dl_bf16_to_f32(uint16_t h);

/* Whether a received value matches the expected one: exact, except avg on
 * floating types where 1/n rounding is allowed (n ulps). */
int dl_value_matches(dl_dtype_t dt, dl_op_t op, int nranks, double got, double want);
/* The tolerance dl_value_matches applies (0: exact). */
double dl_match_tolerance(dl_dtype_t dt, dl_op_t op, int nranks);
/* fp8 and unsigned types change the pattern (see pattern.h). */
int dl_dtype_is_narrow(dl_dtype_t dt);
int dl_dtype_is_unsigned(dl_dtype_t dt);

/* Elements the buffers need: in-place uses recvbuf alone. */
size_t dl_counts_buffer_elems(const dl_counts_t *cnt, dl_place_t place, int recv);

/* Host fill and check, for backends with host buffers. In-place passes the
 * same buffer twice. fill poisons the receive region, then writes the send
 * pattern; check counts result elements that differ from expected. */
void dl_fill_host(const dl_coll_t *c, dl_dtype_t dt, dl_op_t op, int rank,
                  const dl_counts_t *cnt, dl_place_t place, void *sendbuf, void *recvbuf);
uint64_t dl_check_host(const dl_coll_t *c, dl_dtype_t dt, dl_op_t op, int rank,
                       int nranks, int root, const dl_counts_t *cnt, dl_place_t place,
                       const void *recvbuf);

#endif
