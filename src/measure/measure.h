/*
 * measure: the one measurement loop every backend shares. For one case
 * (collective, dtype, op, placement, size) it checks correctness, warms up,
 * then times batches of iterations until the 95% confidence interval of the
 * mean is within the target (adaptive) or a fixed count is done. The time of
 * an iteration is the slowest rank's (or, with -a, the ranks' mean, the
 * fastest's, rank 0's); the loop never adds work inside a
 * batch: cross-rank reductions happen between batches, through the xcomm
 * the caller provides (MPI in the supervisors, whether the backend runs
 * there or in a worker), so every rank takes the same decision.
 */
#ifndef DL_MEASURE_H
#define DL_MEASURE_H

#include "../backends/backends.h"

/* The loop's cross-rank steps go through the exchange object, dl_xcomm_t
 * (backends.h). */

typedef struct {
    int warmup;            /* untimed iterations before timing */
    int iters;             /* > 0: fixed count; 0: adaptive */
    double ci_target;      /* adaptive: stop when ci95 <= target * mean (0: never) */
    double budget_s;       /* adaptive: stop once this much time is spent timing */
    int min_iters;         /* adaptive: never fewer */
    int max_iters;         /* adaptive: never more */
    int check;             /* validate results */
    int arrivals;          /* after the timing, DL_ARRIVAL_CALLS calls each after a
                            * barrier give each rank's lateness (rank_late_s; stragglers) */
    int agg;               /* dl_agg_t: how an iteration's time is formed over ranks */
    int unit_calls;        /* calls in one timed unit (a CUDA graph's replay); 0 = 1.
                            * Times come per call; batches are planned in units.
                            * Set from the backend's traits, never by a command */
    dl_split_t split;      /* --split: the groups measured side by side (the xcomm's
                            * all); op NONE: one group, the world */
} dl_measure_opts_t;

#define DL_ARRIVAL_CALLS 5

/* -a: an iteration's time over the ranks: the slowest's (default), their
 * mean, the fastest's, rank 0's (nccl-tests' -a 3, 1, 2, 0). */
typedef enum { DL_AGG_MAX, DL_AGG_MEAN, DL_AGG_MIN, DL_AGG_RANK0, DL_AGG_COUNT } dl_agg_t;
extern const char *const dl_agg_names[DL_AGG_COUNT];
/* The command line's words for a case (names.c): option choices. The
 * dtypes take nccl-tests' names too (float, half, ...), -a its digits. */
extern const dl_choices_t dl_coll_choices, dl_dtype_choices, dl_op_choices, dl_agg_choices;
/* In place over ranks, n values (scratch: n uint64 for the mean). */
dl_status_t dl_agg_over_ranks(const dl_xcomm_t *x, int agg, double *v, size_t n, uint64_t *scratch);

/* The outcome of one case: what a row of the table and of run.json holds. */
typedef struct {
    dl_case_t c;
    int nranks;             /* processes that measured (the per-rank arrays' length) */
    int bus_ranks;          /* ranks the figures are for: nranks, or a model's */
    dl_stats_t t;           /* per-call time, slowest rank, seconds: mean, n and ci95 from
                             * the timed batches (no per-call timing); p50, p95, p99, min,
                             * max and stdev from a separate pass timed call by call */
    double avg_s;           /* back-to-back average per iteration (slowest rank) */
    double algbw_gbps, busbw_gbps; /* from the mean, nccl-tests convention */
    uint64_t wrong;         /* wrong elements, all ranks */
    uint64_t *wrong_per_rank; /* rank 0 only, nranks entries (NULL elsewhere) */
    double *rank_mean_s;    /* rank 0 only: each rank's own mean time (its batches) */
    double *rank_late_s;    /* rank 0 only: each rank's lateness: the median over a few
                             * calls, each after a barrier, of when it entered the call
                             * after the barrier let it go (its own clock) */
    int converged;          /* adaptive: CI target reached (fixed: 1) */
    int stop;               /* dl_stop_t: why the timing ended */
    int checked;            /* the results were validated (0: --no-check, or a model
                             * that moves no data): wrong is then not known */
    double setup_s;         /* host seconds (rank 0) on fill, check and warm-up */
    double timed_s;         /* host seconds (rank 0) from the first timed batch to the
                             * last: the calls, reading their times, the agreements */
    dl_split_t split;       /* --split: the groups (op NONE: none); then the row is
                             * group's, nranks and the per-rank arrays its ranks' (in
                             * dl_split_members order) */
    int32_t group;
    int32_t step, call;     /* a step plan's row: the step's index in the plan, and its
                             * call's (-1: the step's own row); 0 in a sweep */
    dl_status_t status;
    /* What the backend chose for this row's checked call, where it says
     * (NCCL: algorithm, protocol, channels; "" and 0: not known, and then
     * left out of run.json's row: "algo", "proto", "nchannels",
     * "choice_from"); rank 0's view. choice_mixed: ranks saw different
     * choices (run.json's "choice_mixed": true). */
    dl_choice_t choice;
    int choice_mixed;
    int shared_gpu;         /* ranks on one GPU, each its own NCCL host (0, 1: none);
                             * run.json's "shared_gpu": shared-GPU socket figures */
} dl_result_t;

/* Why a row's timing ended: its CI target met, the budget spent first,
 * max-iters reached first, a fixed count (-n), the spread measured on
 * a quarter of the budget predicting that the whole budget would not meet
 * the CI target (noisy), or a call that moves nothing (no-op: one rank in
 * place) timed over the first batches only. */
typedef enum {
    DL_STOP_CI,
    DL_STOP_BUDGET,
    DL_STOP_MAX_ITERS,
    DL_STOP_FIXED,
    DL_STOP_NOISY,
    DL_STOP_NO_OP,
    DL_STOP_COUNT
} dl_stop_t;
/* "ci", "budget", "max-iters", "fixed", "noisy", "no-op" */
extern const char *const dl_stop_names[DL_STOP_COUNT];

void dl_result_free(dl_result_t *r);
/* The record crosses between ranks whole (--split: every group's to
 * world rank 0, plan.c): packed into one malloc'd
 * buffer, and unpacked (bad framing: DL_ERR_COMM) on the other side. */
dl_status_t dl_result_pack(const dl_result_t *r, void **buf, uint32_t *len);
dl_status_t dl_result_unpack(const void *buf, uint32_t len, dl_result_t *out);

/* Stragglers of one row (rank 0): late[i] = 1 for a rank whose lateness
 * is above the ranks' median by more than DL_LATE_MAD_K MADs and by more
 * than a quarter of the row's p50 (and DL_LATE_FLOOR_S); returns how many. */
#define DL_LATE_MAD_K 5.0
#define DL_LATE_FLOOR_S 10e-6
int dl_result_stragglers(const dl_result_t *r, int *late);
/* Slow ranks of one row (rank 0; stragglers.c): slow[i] = 1 for a rank
 * whose own mean time is above its host's median (hosts of >= 3 ranks;
 * host_of[i] per rank of the row, NULL: one host) by the same margins;
 * ratio (may be NULL) its time over that median. Returns how many. */
int dl_result_slow_ranks(const dl_result_t *r, const int *host_of, int *slow, double *ratio);

/* Stragglers over many rows, the one rule of sweep and preflight: a rank
 * is named when late (dl_result_stragglers) or slow (dl_result_slow_ranks)
 * in at least half the rows judged. Ranks are world ranks; a --split row
 * is mapped through its group. Hosts from host_of (per world rank), else
 * from names (DL_RANK_NAME_LEN chars a rank), else one host. */
#define DL_RANK_NAME_LEN 256
typedef struct {
    int nranks, rows;
    int *host_of;
    int *late_rows, *slow_rows;
    double *late_sum, *slow_sum; /* seconds past the row's median; time / host median */
} dl_rank_tally_t;
typedef struct {
    int rows, late_rows, slow_rows;
    double late_s, slow_ratio; /* means over the rows that named the rank */
} dl_rank_why_t;
dl_status_t dl_rank_tally_init(dl_rank_tally_t *t, int nranks, const int *host_of,
                               const char *names);
void dl_rank_tally_add(dl_rank_tally_t *t, const dl_result_t *r);
int dl_rank_tally_named(const dl_rank_tally_t *t, int rank, dl_rank_why_t *why);
/* "late in 5/5 ROWS by 11.2 us, slow in ..." (what named it); the length. */
int dl_rank_why_text(const dl_rank_why_t *w, const char *rows, char *buf, size_t len);
void dl_rank_tally_free(dl_rank_tally_t *t);

/* Bandwidths in GB/s (1e9 bytes/s) from a size and a time. */
double dl_algbw(uint64_t bytes, double seconds);
double dl_busbw(const dl_coll_t *c, int nranks, uint64_t bytes, double seconds);
/* Whether the row's call moves nothing: one rank (of its group) in place,
 * where the library returns at once. Its bandwidths are 0 and its timing
 * ends after the first batches (stop "no-op"). */
int dl_result_moves_nothing(const dl_result_t *r);
/* r->algbw_gbps and r->busbw_gbps from r->t.mean (0 when the call moves nothing). */
void dl_result_bandwidths(dl_result_t *r);

/* Measures one case, readied first by dl_measure_ready (the backend's
 * check when checking, else its prepare). On a failure of the backend or
 * the xcomm, returns it (result status set). */
dl_status_t dl_measure_case(const dl_backend_ops_t *be, void *bctx, const dl_xcomm_t *x,
                            const dl_measure_opts_t *o, const dl_case_t *c, dl_result_t *out);

/* What a job measures: a sweep (every (collective, dtype, op, size,
 * placement) the masks select, in that order: a collective's rows
 * together, out/in of a size adjacent), or training steps (tune): each
 * step's all-reduces, in the order a step issues them, are one measured
 * unit; its calls run back to back, and steps repeat until the step
 * time's 95% CI is within ci_target (or the budget or max_iters ends it);
 * every distinct call is checked first. Per step the callback gets one
 * result per call (that call's time over the steps, slowest rank per
 * call; r->step and r->call say which) and then one for the step (call
 * -1; bytes: the step's sum; t: the step times). A step plan's calls are
 * all-reduces (sum); places picks in or out of place. */
typedef enum { DL_PLAN_SWEEP, DL_PLAN_STEPS } dl_plan_kind_t;
typedef struct {
    uint64_t bytes;
    dl_dtype_t dtype;
} dl_call_t;
typedef struct {
    const dl_call_t *calls;
    size_t ncalls;
} dl_step_t;
typedef struct {
    dl_plan_kind_t kind;
    uint32_t places;             /* bit 0 out-of-place, bit 1 in-place */
    int root;
    dl_measure_opts_t mo;
    union {
        struct {
            uint32_t colls, dtypes, ops; /* bit i = dl_colls[i], dl_dtype_names[i], dl_op_names[i] */
            const uint64_t *sizes;
            size_t nsizes;
        } sweep;
        struct {
            const dl_step_t *v;
            size_t n;
        } steps;
    };
} dl_plan_t;

/* The largest call of the plan, in bytes as requested. */
uint64_t dl_plan_max_bytes(const dl_plan_t *p);

/* Called on every rank for every finished case; rank 0 holds the gathered
 * per-rank figures. A non-OK return stops the plan. */
typedef dl_status_t (*dl_result_cb_t)(void *arg, dl_result_t *r);

/* How many cases the plan runs on this backend (NULL: every case), its
 * cases sized for `ranks` (a size measured once counts once). */
size_t dl_plan_cases(const dl_plan_t *p, const dl_backend_ops_t *be, int ranks);
/* Runs the plan; stops at the first failure (its status returned). A case
 * with wrong elements does not stop it: the callback sees r->wrong. */
dl_status_t dl_plan_run(const dl_plan_t *p, const dl_backend_ops_t *be, void *bctx,
                        const dl_xcomm_t *x, dl_result_cb_t cb, void *arg);

/* The loop's agreement on a status (every rank learns whether any failed)
 * and its adaptive stop rule, for the step loop. */
dl_status_t dl_measure_agree(const dl_xcomm_t *x, dl_status_t st);
/* A case made ready to time, agreed: checked (the backend's check refills
 * the buffers itself, so it alone; *wrong: this rank's wrong elements), or
 * unchecked, only filled. Never both: at 4 GiB a second fill is 8 GiB of
 * device writes a row. */
dl_status_t dl_measure_ready(const dl_backend_ops_t *be, void *ctx, const dl_xcomm_t *x,
                             const dl_case_t *c, int check, uint64_t *wrong);
int dl_measure_enough(const dl_measure_opts_t *o, const dl_running_t *r, double spent,
                      int *converged);

/* The step plan's walk (step.c), called by dl_plan_run. */
dl_status_t dl_step_plan_run(const dl_plan_t *p, const dl_backend_ops_t *be, void *bctx,
                             const dl_xcomm_t *x, dl_result_cb_t cb, void *arg);

/* Builds the case for (coll, dtype, op, place, root, size, nranks, rank). */
void dl_case_init(dl_case_t *c, const dl_coll_t *coll, dl_dtype_t dt, dl_op_t op,
                  dl_place_t place, int root, uint64_t bytes, int nranks, int rank);

#endif
