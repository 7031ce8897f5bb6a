/* preflight's own plumbing, shared by the files of this folder only. */
#ifndef DL_PF_INTERNAL_H
#define DL_PF_INTERNAL_H

#include "preflight.h"

/* An opened backend, behind the one fault-injection wrapper: measure
 * through &b->w.ops with &b->w as its context. */
typedef struct {
    void *ctx;
    dl_inject_wrap_t w;
} pf_be_t;

/* Scope bits of dl_pf_opts_t.scopes. */
#define DL_PF_SCOPE_NODE 1
#define DL_PF_SCOPE_RAIL 2
#define DL_PF_SCOPE_PAIR 4

typedef struct {
    const dl_pf_opts_t *o;
    const dl_backend_ops_t *be; /* o->world's or o->scopes', as the stage says */
    void *be_opts;
    MPI_Comm world;
    int faulted;                /* a rank's worker hung, died or failed: named; the
                                   checks after are skipped */
    int rank, nranks;
    dl_pf_layout_t lay;
    /* rank 0 only */
    cJSON *doc, *checks, *scopes, *suspects;
    cJSON *v_hosts, *v_gpus, *v_pairs, *v_rails;
    int npass, nwarn, nfail, nskip;
} pf_ctx_t;

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
/* The verdict object and line; returns DL_ERR_CHECK when anything failed. */
dl_status_t pf_verdict(pf_ctx_t *c);

/* Watchdog: a step that makes no progress for o->timeout_s aborts the job
 * with exit 3 (rank 0 leaves a JSON that says so at json_path). */
void pf_watchdog_start(pf_ctx_t *c, const char *json_path);
void pf_step(const char *what);

/* Measures one case in every member at once: ranks with color[rank] >= 0
 * form member `color`. fig[m] = busbw (GB/s, from the median iteration) of
 * member m on every rank, -1 where not measured; wrong[m] its wrong
 * elements (either may be NULL). Members of one rank are not measured. */
dl_status_t pf_measure_members(pf_ctx_t *c, const int *color, int ncolors, dl_coll_id_t coll,
                               uint64_t bytes, double *fig, uint64_t *wrong);

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
dl_status_t pf_correctness(pf_ctx_t *c);
dl_status_t pf_bandwidth(pf_ctx_t *c);
dl_status_t pf_scopes(pf_ctx_t *c);
/* Baseline busbw for a collective at a size and rank count; < 0 if none. */
double pf_baseline_busbw(const cJSON *run, const char *coll, uint64_t bytes, int ranks);
/* The modelled busbw of a system description (topologies/systems/) at this
 * many nodes; < 0 if it cannot be modelled. */
double pf_model_busbw(const char *system, int nhosts, dl_coll_id_t coll, uint64_t bytes);

#endif
