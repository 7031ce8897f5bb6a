/*
 * tune: a training step's gradient traffic. A model is its gradients in
 * named_parameters() order; a framework's bucketing (PyTorch DDP, Horovod)
 * turns them, as the backward pass makes them ready, into the sequence of
 * fused all-reduces a step runs; a timeline places the measured calls
 * against the ready times. Nothing here talks to a backend: cmd_tune.c
 * measures the sequence as a job (src/job/) running a step plan, and hands
 * the measured steps back here for the answer (answer.c).
 */
#ifndef DL_TUNE_H
#define DL_TUNE_H

#include <stdint.h>

#include "../util/util.h"
#include "../../collectives/collectives.h"

#define DL_TENSOR_MAXDIM 8

typedef struct {
    char name[160];
    int ndim;                      /* 0: given as an element count only */
    int64_t shape[DL_TENSOR_MAXDIM];
    uint64_t numel;
    dl_dtype_t dtype;
} dl_tensor_t;

typedef struct {
    char name[64];
    dl_tensor_t *t; /* named_parameters() order (the forward order) */
    size_t n, cap;
} dl_model_t;

/* The built-in models, each generated from its architecture. */
extern const char *const dl_model_names[];
extern const size_t dl_model_count;
/* NAME (a built-in) or a path to a model file; one line and DL_ERR_INPUT /
 * DL_ERR_USAGE when it is neither or the file is bad. Every tensor gets
 * dtype unless the file names its own. */
dl_status_t dl_model_load(const char *name_or_path, dl_dtype_t dtype, dl_model_t *m);
dl_status_t dl_model_builtin(const char *name, dl_dtype_t dtype, dl_model_t *m);
/* The model file: {"model": NAME, "tensors": [{"name", "shape" | "numel",
 * "dtype"}]}; strict: unknown keys, bad shapes, duplicate names, an empty
 * list, a dtype other than float32/float16/bfloat16 are refused (one line
 * naming the file, the tensor and the problem; DL_ERR_INPUT). what: the
 * file's name for that line; dtype: for tensors that name none. */
dl_status_t dl_model_parse(const char *text, const char *what, dl_dtype_t dtype, dl_model_t *m);
/* The same format, malloc'd text. */
char *dl_model_to_json(const dl_model_t *m);
void dl_model_free(dl_model_t *m);
uint64_t dl_model_params(const dl_model_t *m);
uint64_t dl_tensor_bytes(const dl_tensor_t *t);

/* ---- readiness: the backward-pass model ----
 * The backward pass takes backward_s; it produces gradients in reverse
 * parameter order, tensor i taking a share of that time proportional to
 * its element count. ready[i] (indexed as m->t) is when its gradient is done. */
void dl_ready_times(const dl_model_t *m, double backward_s, double *ready);

/* ---- buckets: the fused all-reduces of one step, in the order issued ---- */
typedef struct {
    size_t *idx;      /* tensor indices into m->t, in the order placed */
    size_t n;
    uint64_t bytes;   /* sum of the tensors' bytes */
    dl_dtype_t dtype;
    double ready_s;   /* when the framework can start it (all ready; Horovod: cycle tick) */
} dl_bucket_t;

typedef struct {
    dl_bucket_t *b;
    size_t n;
} dl_buckets_t;

void dl_buckets_free(dl_buckets_t *bs);

/* PyTorch DDP after its first step (buckets rebuilt in gradient-ready
 * order, which for this model is reverse parameter order): tensors grouped
 * per dtype, a group's bucket closed as soon as its bytes reach the current
 * limit, the limits taken in turn from limits[] (the last one repeats);
 * DDP uses {first_bucket_bytes (1 MiB), bucket_cap_mb MiB}. Issued in the
 * order they close, the open ones last. */
dl_status_t dl_bucket_ddp(const dl_model_t *m, const uint64_t *limits, size_t nlimits,
                          const double *ready, dl_buckets_t *out);
/* The same over an explicit order (order[k] = tensor index), as
 * PyTorch's function takes it: for the checks against PyTorch. */
dl_status_t dl_bucket_ddp_order(const dl_model_t *m, const size_t *order, size_t norder,
                                const uint64_t *limits, size_t nlimits, const double *ready,
                                dl_buckets_t *out);

/* Horovod: its background loop wakes every cycle_s; the tensors whose
 * requests arrived by a tick are that cycle's responses, in ready order.
 * Fusion takes the first response, then walks the rest: one of the same
 * dtype that fits (fused + its bytes <= threshold) joins; one that does
 * not is skipped while fused + the skipped bytes stay within the
 * threshold, else the walk ends; skipped ones stay, in order, for the next
 * fused response of the same cycle. threshold 0: no fusion; cycle_s > 0.
 * A bucket's ready_s is its cycle's tick. */
dl_status_t dl_bucket_horovod(const dl_model_t *m, uint64_t threshold, double cycle_s,
                              const double *ready, dl_buckets_t *out);

/* ---- the timeline of one step ----
 * One stream: bucket k's all-reduce starts at max(its ready time, the end
 * of bucket k-1) and lasts call_s[k]. comm_s: the sum of the calls;
 * end_s: when the last one ends; exposed_s: max(0, end_s - backward_s). */
typedef struct {
    double comm_s, end_s, exposed_s;
} dl_timeline_t;
void dl_timeline(const dl_buckets_t *bs, const double *call_s, double backward_s,
                 dl_timeline_t *out);

/* ---- one tune: the settings asked for, the model, the candidates ---- */

/* tune's own options (cmd_tune.c's table fills them). */
typedef struct {
    const char *model, *framework, *dtype, *caps, *thresholds, *cycles, *json, *curve;
    double backward_ms, first_mb;
    int plan_only;
} dl_tune_opts_t;

/* One candidate setting (ddp: cap_mb; horovod: thr_mb, cycle_ms) and the
 * buckets a step issues under it. */
typedef struct {
    double cap_mb, thr_mb, cycle_ms;
    dl_buckets_t bs;
} dl_tune_setting_t;

typedef struct {
    dl_tune_opts_t o;
    int horovod, quiet;
    dl_model_t m;
    double *ready, backward_s;
    dl_tune_setting_t *c;
    size_t nc;
} dl_tune_t;

/* The model loaded, its ready times, every candidate's buckets (setting.c).
 * Every list option is checked, the other framework's too; a bad list or a
 * --curve without all-reduce rows: one line, DL_ERR_USAGE / DL_ERR_INPUT. */
dl_status_t dl_tune_prepare(dl_tune_t *t);
void dl_tune_free(dl_tune_t *t);
/* "bucket_cap_mb 25" or "threshold 64 MiB, cycle 5 ms". */
void dl_tune_setting_text(const dl_tune_t *t, const dl_tune_setting_t *c, char *buf, size_t len);

/* ---- the answer (answer.c) ---- */

/* One candidate's step as measured under one profile. */
typedef struct {
    const char *profile;
    char *const *env; /* the profile's settings, for the lines to paste */
    int nenv;
    size_t cand;
    int measured, converged;
    double step_s, step_ci_s, comm_s, exposed_s, end_s, pred_s;
    double *call_s; /* each bucket's call */
} dl_tune_meas_t;

/* The step's timeline from its calls (call_s filled): comm, exposed, end. */
void dl_tune_meas_step(const dl_tune_t *t, dl_tune_meas_t *m, double step_s, double ci_s,
                       int converged);
/* After the measurement (rank 0): the curve's prediction, the
 * recommendation, the summary on stdout, --json; the "tune" object is
 * added to run (the run record being written to dir). mst: how the
 * measurement ended. */
struct cJSON;
dl_status_t dl_tune_answer(const dl_tune_t *t, dl_tune_meas_t *ms, size_t n, struct cJSON *run,
                           const char *dir, dl_status_t mst);
/* --plan-only: the model and each candidate's buckets as JSON, on stdout
 * or into --json; the exit code. */
int dl_tune_print_plan(const dl_tune_t *t);

#endif
