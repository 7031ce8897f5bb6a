/* preflight's own plumbing, shared by the files of this folder only. */
#ifndef DL_PF_INTERNAL_H
#define DL_PF_INTERNAL_H

#include "plan.h"
#include "preflight.h"
#include "../sys/sys.h"

/* An opened backend, behind the one fault-injection wrapper: measure
 * through &b->w.ops with &b->w as its context. */
typedef struct {
    void *ctx;
    dl_inject_wrap_t w;
} pf_be_t;

#define DL_PF_BUS_LEN 32

/* Scope bits of dl_pf_opts_t.scopes. */
#define DL_PF_SCOPE_NODE 1
#define DL_PF_SCOPE_RAIL 2
#define DL_PF_SCOPE_PAIR 4
#define DL_PF_SCOPE_PLAN 8 /* the adaptive planner on these ranks (planscope.c) */

typedef struct {
    const dl_pf_opts_t *o;
    const dl_backend_ops_t *be; /* o->world's or o->scopes', as the stage says */
    void *be_opts;
    MPI_Comm world;
    int faulted;                /* a rank's worker hung, died or failed: named; the
                                   checks after are skipped */
    int rank, nranks;
    dl_pf_layout_t lay;
    int arrivals;               /* figures also time each rank's arrival (stragglers) */
    /* rank 0 only */
    cJSON *doc, *checks, *scopes, *suspects;
    cJSON *v_hosts, *v_gpus, *v_pairs, *v_rails, *v_ranks;
    int npass, nwarn, nfail, nskip;
    dl_rank_tally_t late;       /* the world figures' stragglers (ranks.c) */
    int *gpu_of;                /* each rank's GPU index (-1: none), from the host checks */
    char (*bus_of)[DL_PF_BUS_LEN]; /* and its PCI bus id ("" none) */
} pf_ctx_t;

/* rank 0: the document's checks, scopes and suspects, and the verdict's
 * lists (pf_ctx_doc_close frees what the verdict did not take). */
void pf_ctx_doc_open(pf_ctx_t *c, cJSON *doc);
void pf_ctx_doc_close(pf_ctx_t *c);

/* Opens c->be over the exchange x (its ranks) for cases up to max_bytes. */
dl_status_t pf_be_open(pf_ctx_t *c, const dl_xcomm_t *x, uint64_t max_bytes, pf_be_t *b);
void pf_be_close(pf_ctx_t *c, pf_be_t *b);
/* After a failed measurement (collective over world): with a worker
 * backend, each rank's own fault is gathered, the worst named as a FAIL
 * with rank and host (c->faulted set) and DL_ERR_CHECK returned; st as it
 * is where no rank owns the failure (the mpi backend: the run broke). */
dl_status_t pf_faults(pf_ctx_t *c, dl_status_t st, const char *what);

/* One check: a line on stdout and an entry in "checks" (rank 0 only; a
 * no-op elsewhere). figures may be NULL; it is taken over. hosts: host
 * indices the check concerns (-1 ends), or NULL. */
cJSON *pf_check(pf_ctx_t *c, dl_pf_status_t st, const char *check, const char *scope,
                const char *subject, cJSON *figures, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* Names a fault in the verdict (rank 0). */
void pf_blame_host(pf_ctx_t *c, int host);
void pf_blame_pair(pf_ctx_t *c, int a, int b);
void pf_blame_rail(pf_ctx_t *c, int rail);
void pf_blame_gpu(pf_ctx_t *c, const char *host, int gpu, const char *bus_id);
/* A rank at fault (a straggler): the rank, its host and its GPU. */
void pf_blame_rank(pf_ctx_t *c, int rank);
/* The verdict object and line; returns DL_ERR_CHECK when anything failed. */
dl_status_t pf_verdict(pf_ctx_t *c);

/* Watchdog: a step that makes no progress for o->timeout_s aborts the job
 * with exit 3 (rank 0 leaves a JSON that says so at json_path). */
void pf_watchdog_start(pf_ctx_t *c, const char *json_path);
void pf_step(const char *what);
/* Every check ran: the step becomes "done" and a signal no longer ends the
 * run (the verdict is being written). Returns 0 when the watchdog already
 * ended it (a signal came first): the caller writes nothing and waits for
 * the abort. */
int pf_watchdog_final(void);

/* Measures one case in every member at once: ranks with color[rank] >= 0
 * form member `color`. fig[m] = busbw (GB/s, from the median iteration) of
 * member m on every rank, -1 where not measured; wrong[m] its wrong
 * elements (either may be NULL). Members of one rank are not measured. */
dl_status_t pf_measure_members(pf_ctx_t *c, const int *color, int ncolors, dl_coll_id_t coll,
                               uint64_t bytes, double *fig, uint64_t *wrong);

/* The wall time of one figure is bounded by its share, PF_FIGURE_BUDGETS x
 * the measurement budget: the size is chosen from single calls that ramp
 * up from PF_PROBE_BYTES (an MPI collective cannot be interrupted, so a
 * slow member must never start a call that would not fit). */
#define PF_FIGURE_BUDGETS 20
#define PF_PROBE_BYTES (64u << 10)
double pf_figure_s(const dl_pf_opts_t *o);

typedef struct {
    uint64_t asked;       /* the size asked for */
    uint64_t bytes;       /* the size measured; 0: none fitted (bound_gbps holds) */
    uint64_t probe_bytes; /* the last single call's size, and its time */
    double probe_s;
    double est_s;         /* the figure's estimated time at the asked size */
    double share_s;
    double bound_gbps;    /* bytes == 0: the member is below this */
} pf_size_t;

/* Chooses the size of a figure of `calls` calls plus extra_s of budget
 * from single calls of coll, so it fits its share (sz; the same on every
 * rank of x). */
dl_status_t pf_fit(pf_ctx_t *c, pf_be_t *b, const dl_xcomm_t *x, dl_coll_id_t coll,
                   uint64_t bytes, int calls, double extra_s, pf_size_t *sz);
/* One figure, sized to fit its share (r is the measurement at sz->bytes;
 * when nothing fits, r holds only the single call's case and busbw). */
dl_status_t pf_measure_sized(pf_ctx_t *c, pf_be_t *b, const dl_xcomm_t *x, dl_coll_id_t coll,
                             uint64_t bytes, dl_result_t *r, pf_size_t *sz);
/* A line's note when the size was cut or nothing fitted ("" otherwise),
 * and the same as a "sized" object in a check's figures. */
void pf_size_note(const pf_size_t *sz, const char *coll, char *buf, size_t len);
void pf_size_json(cJSON *f, const pf_size_t *sz);
/* pf_measure_members, and each member's sizing in sizes[m] (every rank). */
dl_status_t pf_measure_members_sized(pf_ctx_t *c, const int *color, int ncolors,
                                     dl_coll_id_t coll, uint64_t bytes, double *fig,
                                     uint64_t *wrong, pf_size_t *sizes);

/* Whether v, put in place of figs[i], would still be a low outlier among
 * figs: a suspect's retest is judged by the same rule as the first pass. */
int pf_still_low(const pf_ctx_t *c, const double *figs, int n, int i, double v);
/* How many times a suspect is measured again; every one must stay low (a
 * faulty link is never fast by accident, a healthy one is slow by accident). */
#define PF_RETESTS 2

/* The checks, in the order they run. */
dl_status_t pf_host_checks(pf_ctx_t *c);
/* Judges one host's NVML figures ({"nvml": why, "gpus": [dl_gpu_json...]})
 * on rank 0: one line per GPU, failing GPUs named in the verdict. */
dl_status_t pf_gpu_judge(pf_ctx_t *c, int host, const cJSON *hostobj);
/* Each rank measures its GPU's copies (gpucopy.h), rank 0 judges them: one
 * line per GPU per figure (gpu-copy, h2d, d2h), or one SKIP per host that
 * says why. g: this host's NVML view (its PCIe link), or NULL. */
dl_status_t pf_gpu_copy_checks(pf_ctx_t *c, const dl_gpus_t *g);
/* Its two halves: this rank's figures as the JSON gathered to rank 0
 * (measured_by >= 0: that rank measures this rank's GPU, this one not), and
 * rank 0's judgement of one of them against the system's figures (skipped:
 * per host, whether its SKIP line was given). */
struct dl_gc_system;
cJSON *pf_gpu_copy_mine(pf_ctx_t *c, const dl_gpus_t *g, int measured_by);
void pf_gpu_copy_judge(pf_ctx_t *c, const struct dl_gc_system *sys, const cJSON *e, char *skipped);
dl_status_t pf_correctness(pf_ctx_t *c);
dl_status_t pf_bandwidth(pf_ctx_t *c);
dl_status_t pf_scopes(pf_ctx_t *c);
/* Per-rank judgement of the world figures (ranks.c): a rank late into the
 * calls, or slow beside its host's other ranks, in at least half of them
 * (the sweep's rule, dl_rank_tally_t) is a suspect, measured again and
 * named with its host and GPU when it stays one. */
dl_status_t pf_ranks_init(pf_ctx_t *c);
void pf_ranks_add(pf_ctx_t *c, const dl_result_t *r);
dl_status_t pf_ranks(pf_ctx_t *c);
void pf_ranks_free(pf_ctx_t *c);
/* The rank's GPU as a line names it: "gpu2 0000:4a:00.0" or "no GPU". */
void pf_rank_gpu(const pf_ctx_t *c, int rank, char *buf, size_t len);
/* Baseline busbw for a collective at a size and rank count, from rows the
 * backend named measured; < 0 if none, and why says why when rows matched
 * but were not comparable (modelled, another backend); "" otherwise. */
double pf_baseline_busbw(const dl_record_t *run, const char *backend, const char *coll,
                         uint64_t bytes, int ranks, char *why, size_t whylen);
/* The modelling backend's busbw (its expect) for a collective at a size on
 * this many nodes; < 0 if it cannot say. */
double pf_model_busbw(const struct dl_pf_model *m, int nhosts, dl_coll_id_t coll, uint64_t bytes);

/* The pair figures (nhosts x nhosts, < 0: not measured) as o["matrix"]:
 * hosts, median_gbps, busbw_gbps and the cells slow(arg, a, b) marks (pairs.c;
 * the pair scope's and the plan scope's, one shape). */
void pf_pair_matrix_json(const pf_ctx_t *c, const double *pair, double median,
                         int (*slow)(const void *arg, int a, int b), const void *arg, cJSON *o);
/* The adaptive planner's findings (planreport.c): "host5", "host2-host3" or
 * "rail1"; the JSON of one; its check line (scope: the line's, or NULL: by
 * kind, node, pair or rail), the verdict's entry, and the JSON into list. */
void pf_plan_subject(const pf_ctx_t *c, const pf_finding_t *f, char *buf, size_t len);
cJSON *pf_plan_finding_json(const pf_finding_t *f, const char *subj);
void pf_plan_report_finding(pf_ctx_t *c, const pf_finding_t *f, const char *scope, cJSON *list);
/* Its rounds as "round_log" [{stage, probes, bytes, max_iterations, wall_s}]. */
void pf_plan_round_log_json(const pf_plan_t *p, cJSON *parent);
/* The planner on these ranks (planranks.c): the plan scope. */
dl_status_t pf_plan_scope(pf_ctx_t *c);
/* A barrier that sleeps while it waits (members.c). */
dl_status_t pf_quiet_barrier(MPI_Comm world);

#endif
