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
#include "../results/record.h"

/* The row model is the run record's (results/record.h): dl_record_t,
 * dl_rec_profile_t, dl_row_t. Transitional names for branches written
 * before the rename; to be removed once they are merged. */
typedef dl_record_t dl_run_t;
typedef dl_rec_profile_t dl_prof_t;

const char *dl_fmt_name(dl_fmt_t f);
/* "out" -> "out-of-place", "in" -> "in-place". */
const char *dl_an_place_name(const char *placement);

/* Reads a file (a folder: its run.json), whatever its format: a dlcomm
 * run.json through dl_record_parse, nccl-tests output through its readers.
 * Bad input: one line naming the file and the problem, DL_ERR_INPUT; out of
 * memory: DL_ERR_NOMEM (exit 3). */
dl_status_t dl_an_load(const char *path, dl_record_t *out);
/* The same from memory (buf need not be NUL-terminated). */
dl_status_t dl_an_parse(const char *buf, size_t len, const char *name, dl_record_t *out);
/* Transitional names (see above). */
#define dl_an_free dl_record_free
#define dl_an_add_row dl_rec_push_row
#define dl_an_add_prof dl_rec_push_profile
#define dl_an_row_init dl_rec_row_init
#define dl_an_read_header dl_rec_read_header

dl_status_t dl_an_read_ncclt_json(const char *buf, dl_record_t *out);
dl_status_t dl_an_read_ncclt_text(const char *buf, dl_record_t *out);
/* How many nccl-tests runs a text log holds (a CI or Slurm log often has
 * several): each is read as FILE@K, K from 1 (dl_an_load), and history
 * takes every one. */
int dl_an_ncclt_runs(const char *buf);
/* nccl-tests names -> dlcomm names ("all_reduce_perf" -> "allreduce",
 * "float" -> "float32"); unknown names are kept as they are. */
void dl_an_ncclt_coll(const char *s, char *out, size_t len);
void dl_an_ncclt_dtype(const char *s, char *out, size_t len);

/* The half-width of a row's 95% CI of the mean in us: ci95, or
 * t95 * stdev / sqrt(n); NAN when neither is known. */
double dl_an_spread(const dl_row_t *r);
/* "hosts vm; 2 ranks; dlcomm 0.1.0; NCCL 2.28.3" for titles and warnings. */
void dl_an_describe(const dl_record_t *r, char *buf, size_t len);
/* The run's one rank count: a model's ranks, else the processes'. And the
 * words every output uses for it: "4 ranks on 1 host", "64 modelled ranks
 * (8 nodes), carried by 4 processes on 1 host". */
int dl_an_run_ranks(const dl_record_t *r);
void dl_an_ranks_text(const dl_record_t *r, char *buf, size_t len);
/* The recorded value of an environment variable ("" when not recorded). */
const char *dl_an_env(const dl_record_t *r, const char *key);

/* ---- what differs between two runs (differ.c) ---- */

/* One difference: its kind ("environment", "versions", ...), what
 * ("NCCL_ALGO"), and each side's value ("" where the side has none). */
typedef struct {
    const char *kind;
    char what[96], base[256], cur[256];
} dl_diff_t;
typedef struct {
    dl_diff_t *v;
    size_t n, cap;
} dl_diffs_t;
/* Every difference, kind by kind, in the order of the kinds table. */
dl_status_t dl_an_diffs(const dl_record_t *b, const dl_record_t *n, dl_diffs_t *out);
void dl_an_diffs_free(dl_diffs_t *d);
/* Appends one (for a kind's collector); "" on both sides or equal: none. */
void dl_an_diff_add(dl_diffs_t *d, const char *kind, const char *what, const char *b,
                    const char *n);
/* Orders rows by (profile, collective, dtype, op, placement, bytes, ranks);
 * flags: DL_ROW_PROFILE takes the profile in (0 leaves it out), DL_ROW_ASKED
 * orders by the size asked for where known (dlcomm runs: a size that
 * rounds up to a larger one still pairs with itself). */
#define DL_ROW_PROFILE 1
#define DL_ROW_ASKED 2
int dl_an_row_cmp(const dl_row_t *a, const dl_row_t *b, int flags);

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

dl_status_t dl_curve_get(const dl_record_t *r, const char *profile, const char *coll, dl_curve_t *c);
/* The same for one --split group's rows (group -1: the best row's group, as dl_curve_get). */
dl_status_t dl_curve_get_group(const dl_record_t *r, const char *profile, const char *coll, int group,
                               dl_curve_t *c);
void dl_curve_free(dl_curve_t *c);
double dl_curve_bw(const dl_curve_t *c, size_t i);
double dl_curve_time_at(const dl_curve_t *c, uint64_t bytes);

/* ---- compare ---- */

typedef enum { DL_V_UNCHANGED, DL_V_NOISE, DL_V_IMPROVEMENT, DL_V_REGRESSION } dl_verdict_t;
typedef enum { DL_M_BUSBW, DL_M_TIME } dl_metric_t;
/* --stat's values (compare, watch): mean (index 0) or p50 (1: use_p50). */
extern const dl_choices_t dl_an_stat_choices;

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
    int choice_changed;  /* the library chose otherwise in new (both rows say) */
} dl_pair_t;
/* differ.c: the sizes where the library's choice changed, as differences
 * of kind "choice" ("default allreduce 1 MiB": "Tree/LL128/8" -> ...), one
 * per profile, collective and size, at most a screenful. */
void dl_an_diff_choices(const dl_pair_t *p, size_t n, dl_diffs_t *d);

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
    dl_diffs_t diffs;      /* the same, each with its kind and both values */
    size_t wrong_rows;     /* rows of new with wrong elements: a failure, never a warning */
    size_t failed;         /* profiles ok in base that did not finish ok in new */
    char failures[512];    /* "; "-separated: "nccl-ring: ok -> timeout" */
    size_t wrong_profs;    /* profiles ok in base that finished with wrong data in new */
    char wrong_profiles[512]; /* the same form: "mpi: ok -> wrong REASON" */
} dl_cmp_t;

/* 1 when r is a dlcomm run still being written: no exit code yet and its
 * folder's .dlcomm.lock held by the run (a killed run holds none). */
int dl_an_still_running(const dl_record_t *r);

dl_status_t dl_an_compare(const dl_record_t *b, const dl_record_t *n, const dl_cmp_opts_t *o,
                          dl_cmp_t *out);
void dl_an_cmp_free(dl_cmp_t *c);
/* The pairs, regressions first, then by change, worst first (all 0: the
 * unchanged ones left out); caller frees the array. */
const dl_pair_t **dl_an_cmp_sorted(const dl_cmp_t *c, int all, size_t *nv);
/* The verdict of the whole comparison: 1 a regression (a pair, a profile
 * that no longer finishes, wrong elements in new), else 0. */
int dl_an_cmp_regressed(const dl_cmp_t *c);
const char *dl_an_metric_name(dl_metric_t m);
void dl_an_cmp_print(FILE *f, const dl_record_t *b, const dl_record_t *n, const dl_cmp_opts_t *o,
                     const dl_cmp_t *c);
dl_status_t dl_an_cmp_json(const char *path, const dl_record_t *b, const dl_record_t *n,
                           const dl_cmp_opts_t *o, const dl_cmp_t *c);

/* ---- plot ---- */

typedef struct {
    const char *outdir;
    const char *format; /* "png" or "svg" */
} dl_plot_opts_t;

/* The full path of gnuplot on PATH into buf, or DL_ERR_UNAVAILABLE. */
dl_status_t dl_an_find_gnuplot(char *buf, size_t len);
/* One chart per collective and metric (busbw, time): <coll>-<metric>.<fmt>. */
dl_status_t dl_an_plot(dl_record_t *const *runs, size_t nruns, const dl_plot_opts_t *o);
/* OUTDIR/tune-exposed.FMT: exposed time per candidate, one line per
 * profile (data in tune.dat, script in tune.gp). */
dl_status_t dl_an_plot_tune(const struct cJSON *tune, const dl_plot_opts_t *o);

/* ---- report ---- */

/* The report's figures, computed once and rendered as text, JSON or HTML. */
#define DL_NBANDS 3
typedef struct {
    const char *name;   /* "< 64 KiB" */
    uint64_t lo, hi;    /* lo <= bytes < hi */
    int best, second;   /* curve indices, -1: none */
    double sc_best, sc_second; /* geometric-mean time, us */
    int nsizes;
    int tie;            /* best and second inside each other's noise */
    double noise_pct;   /* their combined 95% half-width, % (NAN: a spread unknown) */
} dl_rep_band_t;

/* What the library chose along a curve's sizes (report_choice.c): runs of
 * consecutive sizes with one algorithm and protocol, in size order; a
 * change from one run to the next is where it switches. */
typedef struct {
    uint64_t lo, hi;        /* first and last size of the run */
    char algo[16], proto[16];
    int ch_lo, ch_hi;       /* fewest and most channels (0: not known) */
    int mixed;              /* some size's ranks saw different choices */
} dl_rep_seg_t;
typedef struct {
    dl_rep_seg_t *segs;     /* none: the curve's rows do not say */
    size_t nsegs;
    char from[16];          /* run.json's choice_from: "profiler", "model" ("": not said) */
    int modelled;           /* from "model": the sim's choice by NCCL's rules */
} dl_rep_chose_t;
/* A profile forcing a setting measured faster, beyond the noise, than the
 * library's own choice (a profile forcing nothing, whose rows carry it), at
 * consecutive sizes with one choice. */
typedef struct {
    int chooser, forced;    /* curve indices */
    uint64_t lo, hi;
    int nsizes;
    double faster_pct;      /* the chooser's time over the forced one's, geo-mean, -1, % */
    double noise_pct;       /* the largest combined 95% half-width of those sizes (NAN: unknown) */
    char chose[48], forced_choice[48]; /* "Tree/LL", and what the forced profile ran */
    char forces[96];        /* "NCCL_ALGO=Ring" */
    int modelled;
} dl_rep_beat_t;

typedef struct {
    char coll[64];
    char (*names)[64];  /* profile of each curve */
    dl_curve_t *cv;
    size_t ncv;
    dl_rep_band_t bands[DL_NBANDS];
    dl_rep_chose_t *chose;  /* one per curve */
    dl_rep_beat_t *beats;
    size_t nbeats;
} dl_rep_coll_t;

typedef enum { DL_ADV_HOROVOD, DL_ADV_NCCL } dl_adv_section_t;
typedef struct {
    dl_adv_section_t section;
    char name[64], value[64]; /* value "" : not judged */
    char why[1024];
} dl_advice_t;

typedef struct {
    int modelled;
    dl_rep_coll_t *colls;
    size_t ncolls;
    dl_advice_t *adv;
    size_t nadv, advcap;
} dl_report_t;

/* baseline: a single-node run for the hierarchical all-reduce advice (NULL
 * when none). */
dl_status_t dl_an_report_make(const dl_record_t *r, const dl_record_t *baseline, dl_report_t *out);
void dl_an_report_free(dl_report_t *rep);
/* Prints the report (text) or writes JSON to f. */
dl_status_t dl_an_report(FILE *f, const dl_record_t *r, const dl_record_t *baseline, int json);

/* report_choice.c: the choices along each curve and the forced profiles
 * that beat them (into rc; r: the profiles' settings); their text and JSON
 * (the HTML page draws them itself). */
dl_status_t dl_an_choice_make(const dl_record_t *r, dl_rep_coll_t *rc);
void dl_an_choice_free(dl_rep_coll_t *rc);
void dl_an_choice_text(FILE *f, const dl_rep_coll_t *rc);
/* Into coll_json's object: each curve's "choice" (its "profiles" entries,
 * in curve order) and the collective's "faster_than_chosen". */
void dl_an_choice_json(struct cJSON *coll, const dl_rep_coll_t *rc);
/* "Tree/LL" / "Ring/Simple/2-4" of a run of sizes; a beat in one sentence:
 * "NCCL chose Tree/LL; profile ring (NCCL_ALGO=Ring) measured faster by ...". */
void dl_an_seg_text(const dl_rep_seg_t *s, char *buf, size_t len);
void dl_an_beat_text(const dl_rep_coll_t *rc, const dl_rep_beat_t *b, char *buf, size_t len);

/* Internal to report: distinct profile (profiles 1) or collective names in
 * order of appearance; the advice (appended to rep->adv). */
size_t dl_an_names(const dl_record_t *r, int profiles, char (*out)[64], size_t max);
/* Every distinct profile name of the rows, however many, in order of
 * appearance: a new array of *n (caller frees); NULL when out of memory. */
typedef char dl_name_t[64];
dl_name_t *dl_an_profile_names(const dl_record_t *r, size_t *n);
dl_status_t dl_an_advice(dl_report_t *rep, const dl_record_t *r, const dl_record_t *baseline);
/* The curve's HOROVOD_FUSION_THRESHOLD (bytes; 0: no all-reduce), and the
 * profile it comes from. */
uint64_t dl_an_fusion_threshold(const dl_record_t *r, char *prof, size_t plen);

/* A tune record (dl_record_read_tune) read for report, plot and the HTML page:
 * its candidates, grouped by profile, the recommendation, and how the
 * curve's fusion advice of a sweep r compares with it. Computed once. */
typedef struct {
    const struct cJSON *json; /* the candidate in the record */
    size_t prof;              /* index into profs */
    char label[64];           /* "25 MiB", "32 MiB/1 ms" (the charts' axis) */
    size_t x;                 /* index of its label in xnames */
    double bytes;             /* fusion size: DDP's cap, Horovod's threshold */
    double exposed_us, comm_us, step_us, ci_us, curve_us; /* NAN: not measured */
    size_t calls;
    int recommended;          /* one of the recommendation's settings */
    int first;                /* its first setting: tune's first choice */
} dl_tune_cand_t;

typedef struct {
    const struct cJSON *tune, *settings; /* the record; recommendation.settings */
    char model[64], framework[16], verdict[32];
    double backward_ms;
    char profs[16][64];
    size_t nprofs;
    dl_tune_cand_t *cand;
    size_t ncand;
    const char **xnames; /* the distinct candidate labels, in order: the x axis */
    size_t nx;
    /* beside the curve: its threshold (0: no sweep or no all-reduce), tune's
     * first choice (best) and the measured candidate nearest the curve's size */
    uint64_t curve_bytes;
    char curve_prof[64];
    int compared, agrees;
    double best_bytes, best_exp, near_bytes, near_exp; /* bytes, us */
    char line[1024]; /* the comparison in one sentence (text, JSON, HTML) */
} dl_tune_rep_t;

/* r: the sweep whose curve is compared (NULL: none). */
dl_status_t dl_an_tune_make(const struct cJSON *tune, const dl_record_t *r, dl_tune_rep_t *out);
void dl_an_tune_free(dl_tune_rep_t *t);
/* The comparison and the recommendation with its lines to paste: text to
 * f; or into the JSON object j ("tune_comparison", the sentence; "tune",
 * its figures). */
void dl_an_tune_print(FILE *f, const dl_tune_rep_t *t);
void dl_an_tune_json(struct cJSON *j, const dl_tune_rep_t *t);

/* ---- history ---- */

typedef struct {
    const dl_record_t *run;
    char profile[64];
    char key[320];    /* "hosts|profile": the group */
    double t;         /* started, Unix seconds */
} dl_hist_run_t;

typedef struct {
    dl_record_t *runs;
    size_t nruns, cap, skipped;
    dl_hist_run_t *ent; /* one per (run, profile), by group then time */
    size_t nent, ngroups;
} dl_hist_t;

typedef struct {
    size_t count[4], npairs, wrong;
    int failed, regressed;
    int running; /* the last run is still being written: not judged */
} dl_hist_verdict_t;

/* Every run under the folders (or files) given; one line and DL_ERR_INPUT
 * when a path does not exist or no run is found. */
dl_status_t dl_an_history_load(char *const *dirs, size_t ndirs, dl_hist_t *h);
void dl_an_history_free(dl_hist_t *h);
void dl_an_history_changes(const dl_record_t *a, const dl_record_t *b, char *buf, size_t len);
size_t dl_an_history_sizes(const dl_hist_run_t *last, const char *coll, uint64_t *out);
double dl_an_history_bw(const dl_hist_run_t *e, const char *coll, uint64_t bytes, double *time_us);
dl_status_t dl_an_history_verdict(const dl_hist_run_t *prev, const dl_hist_run_t *last,
                                  dl_hist_verdict_t *v);
/* The collective a group's trends follow: all-reduce when it has one. */
const char *dl_an_history_coll(const dl_hist_run_t *last, char *buf, size_t len);
/* Text to f; with html, also the page. */
dl_status_t dl_an_history_print(FILE *f, const dl_hist_t *h);
dl_status_t dl_an_html_history(const char *path, const dl_hist_t *h);

/* ---- HTML pages (html*.c, svg.c) ---- */

/* The busbw a system's links allow (the level a chart draws), from a system
 * description (topologies/systems): inside a node NVLink (else PCIe, else
 * shared memory), between nodes the node's NICs together (else TCP), the
 * lower of the two. gbps NAN when unknown. */
typedef struct {
    double gbps;
    char label[192];
} dl_line_t;
dl_status_t dl_an_line_rate(const char *system_file, int nodes, dl_line_t *out);
/* The line of the system r says it modelled (sim), or of system_file when
 * given (a measured run's hardware); NAN when neither is known. */
void dl_an_run_line(const dl_record_t *r, const char *system_file, dl_line_t *out);

/* One self-contained page each, written atomically to path. tune: a tune
 * record (NULL: none), its section after the advice. */
dl_status_t dl_an_html_report(const char *path, const dl_record_t *r, const dl_record_t *baseline,
                              const dl_line_t *line, const dl_tune_rep_t *tune);
/* A tune record's own page (tune --json FILE): its header, then the section. */
dl_status_t dl_an_html_tune(const char *path, const char *file, const dl_tune_rep_t *tune);
dl_status_t dl_an_html_compare(const char *path, const dl_record_t *b, const dl_record_t *n,
                               const dl_cmp_opts_t *o, const dl_cmp_t *c);
/* A path --html may write: not empty, not a folder, its folder writable
 * (checked before any work, so a bad path costs nothing). */
dl_status_t dl_an_html_check(const char *opt, const char *path);

/* ---- Prometheus (node_exporter textfile collector) ---- */

dl_status_t dl_an_prometheus(const char *path, const dl_record_t *r);

/* The same format for other commands' gauges (preflight's verdict, watch's
 * outcome): families in the order given, each gauge's samples right after
 * it. Labels are name, value pairs ended by NULL; a NULL value leaves that
 * label out. Written atomically (then freed) by dl_prom_write. */
typedef struct dl_prom dl_prom_t;
dl_prom_t *dl_prom_new(void);
void dl_prom_gauge(dl_prom_t *p, const char *name, const char *help);
void dl_prom_sample(dl_prom_t *p, const char *name, double v, ...) __attribute__((sentinel));
dl_status_t dl_prom_write(dl_prom_t *p, const char *path);
void dl_prom_free(dl_prom_t *p);
/* --prometheus FILE|DIR: an existing folder gets DIR/name (the textfile
 * collector reads every *.prom there); checked as dl_out_file_check does,
 * before any work. out: the file to write. */
dl_status_t dl_prom_target(const char *opt, const char *arg, const char *name, char *out,
                           size_t len);

/* What sweep calls on rank 0 once run.json is in dir: plot into dir when
 * plot is set, write the Prometheus file when prom is not NULL, the report
 * page when html is not NULL. */
dl_status_t dl_an_after_sweep(const char *dir, int plot, const char *prom, const char *html);
/* Before a sweep starts: gnuplot present for --plot, the --prometheus
 * file's folder writable (or the run folder outdir, made later), neither
 * --prometheus nor --html the run folder itself. One line and DL_ERR_*
 * when not. */
dl_status_t dl_an_sweep_check(int plot, const char *prom, const char *html, const char *outdir);

#endif
