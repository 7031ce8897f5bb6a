/*
 * analysis: turning runs into answers. Reads a dlcomm run.json (schema 1),
 * nccl-tests -J JSON or nccl-tests text output (the format is told by the
 * content, never the file name) into one row model, then compares two runs
 * (noise-aware verdicts), plots runs through gnuplot, reports peaks, bands,
 * crossovers and Horovod settings, and writes Prometheus text files.
 * Depends on util and cJSON only; never talks MPI.
 */
#ifndef DL_ANALYSIS_H
#define DL_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../util/util.h"

/* One measured case, whatever the source. Unknown figures are NAN. */
typedef struct {
    char profile[64], collective[32], dtype[16], op[16], placement[8];
    uint64_t bytes;
    int ranks;
    double time_us, p50_us; /* mean and median time of one call */
    double ci95_us;         /* half-width of the mean's 95% CI (NAN: unknown) */
    double stdev_us;        /* NAN: unknown */
    double algbw, busbw;    /* GB/s */
    long iterations;        /* 0: unknown */
    double wrong;           /* wrong elements (NAN: not checked) */
    int modelled;           /* from a model (sim backend), not a measurement */
} dl_row_t;

typedef struct {
    char name[64], status[16], reason[128];
    int modelled;
    char backend[16];       /* "mpi", "nccl", "sim" ("nccl" for nccl-tests; "" unknown) */
    /* Algorithm and protocol the profile forces ("" when not forced). */
    char algo[32], proto[32];
} dl_prof_t;

typedef enum { DL_FMT_DLCOMM, DL_FMT_NCCLT_JSON, DL_FMT_NCCLT_TEXT } dl_fmt_t;

/* A run: its rows and what it ran on. */
typedef struct {
    char path[512];
    dl_fmt_t fmt;
    dl_row_t *rows;
    size_t nrows, cap;
    dl_prof_t *profs;
    size_t nprofs;
    char hosts[256];      /* "a,b,c" */
    int nhosts, ranks;
    char tool[48];        /* "dlcomm 0.1.0", "nccl-tests 2.19.6" */
    char nccl[32], cuda[32], driver[32], mpi[64], started[32];
} dl_run_t;

const char *dl_fmt_name(dl_fmt_t f);
/* "out" -> "out-of-place", "in" -> "in-place". */
const char *dl_an_place_name(const char *placement);

/* Reads a file (a folder: its run.json). Bad input:
 * one line naming the file and the problem, DL_ERR_INPUT. */
dl_status_t dl_an_load(const char *path, dl_run_t *out);
/* The same from memory (buf need not be NUL-terminated). */
dl_status_t dl_an_parse(const char *buf, size_t len, const char *name, dl_run_t *out);
void dl_an_free(dl_run_t *r);

/* Internal to the readers: append a row (copied). */
dl_status_t dl_an_add_row(dl_run_t *r, const dl_row_t *row);
dl_prof_t *dl_an_add_prof(dl_run_t *r, const char *name);
void dl_an_row_init(dl_row_t *row);
dl_status_t dl_an_read_dlcomm(const char *buf, dl_run_t *out);
dl_status_t dl_an_read_ncclt_json(const char *buf, dl_run_t *out);
dl_status_t dl_an_read_ncclt_text(const char *buf, dl_run_t *out);
/* nccl-tests names -> dlcomm names ("all_reduce_perf" -> "allreduce",
 * "float" -> "float32"); unknown names are kept as they are. */
void dl_an_ncclt_coll(const char *s, char *out, size_t len);
void dl_an_ncclt_dtype(const char *s, char *out, size_t len);

/* The half-width of a row's 95% CI of the mean in us: ci95, or
 * t95 * stdev / sqrt(n); NAN when neither is known. */
double dl_an_spread(const dl_row_t *r);
/* "hosts vm; 2 ranks; dlcomm 0.1.0; NCCL 2.28.3" for titles and warnings. */
void dl_an_describe(const dl_run_t *r, char *buf, size_t len);
/* Orders rows by (profile, collective, dtype, op, placement, bytes, ranks);
 * with_profile 0 leaves the profile out. */
int dl_an_row_cmp(const dl_row_t *a, const dl_row_t *b, int with_profile);

/* A curve: one profile's rows of one collective by size, in the dtype, op
 * and placement that best stand for it (float32, sum, out-of-place first).
 * Bandwidth is busbw, or algbw where busbw is 0 throughout (one rank). */
#define DL_SMALL_BYTES (64u << 10) /* latency floor: sizes up to 64 KiB */
typedef struct {
    const dl_row_t **v;
    size_t n;
    int use_algbw;
    double peak, floor_us;
    size_t peak_i, i50, i90, floor_i; /* smallest sizes reaching 50%, 90% of peak */
} dl_curve_t;

dl_status_t dl_curve_get(const dl_run_t *r, const char *profile, const char *coll, dl_curve_t *c);
void dl_curve_free(dl_curve_t *c);
double dl_curve_bw(const dl_curve_t *c, size_t i);
double dl_curve_time_at(const dl_curve_t *c, uint64_t bytes);

/* ---- compare ---- */

typedef enum { DL_V_UNCHANGED, DL_V_NOISE, DL_V_IMPROVEMENT, DL_V_REGRESSION } dl_verdict_t;
typedef enum { DL_M_BUSBW, DL_M_TIME } dl_metric_t;

const char *dl_verdict_str(dl_verdict_t v);

/* The rule, in one place. change is the signed relative change of the
 * metric in the "worse" direction (> 0 worse). d_us = |t_new - t_base|;
 * spread_us = sqrt(ci_base^2 + ci_new^2) or NAN when a side's is unknown.
 * |change| <= thr -> unchanged; beyond it, d_us <= spread_us -> noise;
 * else regression (change > 0) or improvement. */
dl_verdict_t dl_an_verdict(double change, double thr, double d_us, double spread_us);

typedef struct {
    const dl_row_t *base, *cur;
    dl_metric_t metric; /* what was compared for this pair (busbw falls back to time) */
    double vb, vn;      /* metric values */
    double change;      /* > 0 worse, fraction */
    double spread_us;
    dl_verdict_t verdict;
} dl_pair_t;

typedef struct {
    double threshold;   /* fraction, e.g. 0.05 */
    dl_metric_t metric;
    uint64_t min_size;
    int use_p50;        /* judge the median call, not the mean (robust to preemption) */
} dl_cmp_opts_t;

typedef struct {
    dl_pair_t *pairs;
    size_t npairs;
    size_t count[4];       /* per verdict */
    size_t fallback;       /* pairs compared by time because busbw was 0 */
    size_t no_p50;         /* --stat p50, but a side has no median: the mean was used */
    size_t unknown_spread; /* pairs judged by the threshold alone */
    size_t only_base, only_new, small;
    int profiles_merged;   /* one profile each, names differ: paired anyway */
    char warnings[1024];   /* "; "-separated differences between the runs */
    size_t wrong_rows;     /* rows of new with wrong elements: a failure, never a warning */
    size_t failed;         /* profiles ok in base that did not finish ok in new */
    char failures[512];    /* "; "-separated: "nccl-ring: ok -> timeout" */
} dl_cmp_t;

dl_status_t dl_an_compare(const dl_run_t *b, const dl_run_t *n, const dl_cmp_opts_t *o,
                          dl_cmp_t *out);
void dl_an_cmp_free(dl_cmp_t *c);
void dl_an_cmp_print(FILE *f, const dl_run_t *b, const dl_run_t *n, const dl_cmp_opts_t *o,
                     const dl_cmp_t *c);
dl_status_t dl_an_cmp_json(const char *path, const dl_run_t *b, const dl_run_t *n,
                           const dl_cmp_opts_t *o, const dl_cmp_t *c);

/* ---- plot ---- */

typedef struct {
    const char *outdir;
    const char *format; /* "png" or "svg" */
} dl_plot_opts_t;

/* The full path of gnuplot on PATH into buf, or DL_ERR_UNAVAILABLE. */
dl_status_t dl_an_find_gnuplot(char *buf, size_t len);
/* One chart per collective and metric (busbw, time): <coll>-<metric>.<fmt>. */
dl_status_t dl_an_plot(dl_run_t *const *runs, size_t nruns, const dl_plot_opts_t *o);

/* ---- report ---- */

/* Prints the report (text) or writes JSON to f; baseline: a single-node run
 * for the hierarchical all-reduce advice (NULL when none). */
dl_status_t dl_an_report(FILE *f, const dl_run_t *r, const dl_run_t *baseline, int json);

/* Internal to report: distinct profile (profiles 1) or collective names in
 * order of appearance; the advice section (text to f, or into JSON j). */
struct cJSON;
size_t dl_an_names(const dl_run_t *r, int profiles, char (*out)[64], size_t max);
void dl_an_advice(FILE *f, struct cJSON *j, const dl_run_t *r, const dl_run_t *baseline);

/* ---- Prometheus (node_exporter textfile collector) ---- */

dl_status_t dl_an_prometheus(const char *path, const dl_run_t *r);

/* What sweep calls on rank 0 once run.json is in dir: plot into dir when
 * plot is set, write the Prometheus file when prom is not NULL. */
dl_status_t dl_an_after_sweep(const char *dir, int plot, const char *prom);
/* Before a sweep starts: gnuplot present for --plot, the --prometheus
 * file's folder writable (or the run folder outdir, made later). One line
 * and DL_ERR_* when not. */
dl_status_t dl_an_sweep_check(int plot, const char *prom, const char *outdir);

#endif
