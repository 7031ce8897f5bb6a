/*
 * preflight: a few minutes of checks before a job, each PASS / WARN / FAIL /
 * SKIP with its figures, and a verdict that names the host, GPU, rail or
 * pair at fault. Faults are localised by scopes measured concurrently on
 * MPI sub-communicators (the world, each node alone, each rail, node pairs
 * in a round-robin tournament or a ring), by robust outliers (median and
 * MAD) and by a second pass that pits each suspect against a known-good
 * peer before it is named.
 *
 * The collectives run through a dl_backend_ops_t on a sub-communicator:
 * the mpi backend in these processes, or a worker backend (nccl, sim)
 * through a session of worker processes under the watchdog, each group of
 * ranks with a communicator of its own. A worker that hangs or dies fails
 * its check naming its rank and host, and the rest is skipped to the
 * verdict.
 */
#ifndef DL_PREFLIGHT_H
#define DL_PREFLIGHT_H

#include <cjson/cJSON.h>
#include <mpi.h>

#include "../backends/backends.h"
#include "../analysis/analysis.h"
#include "../measure/measure.h"
#include "../sys/system.h"

typedef enum { DL_PF_PASS, DL_PF_WARN, DL_PF_FAIL, DL_PF_SKIP } dl_pf_status_t;
const char *dl_pf_status_str(dl_pf_status_t s); /* "PASS", ... */

/* How node pairs are scheduled. */
typedef enum { DL_PF_PAIRS_AUTO, DL_PF_PAIRS_ALL, DL_PF_PAIRS_RING, DL_PF_PAIRS_NONE } dl_pf_pairs_t;
/* auto: all pairs up to this many hosts, a ring of pairs beyond. */
#define DL_PF_ALL_PAIRS_MAX_HOSTS 16
#define DL_PF_LOG_MAD_FLOOR 0.15

typedef struct {
    const uint64_t *sizes;     /* bandwidth sizes of the world checks */
    size_t nsizes;
    uint64_t check_bytes;      /* correctness size */
    uint64_t scope_bytes;      /* size of the per-scope figures */
    double min_fraction;       /* bandwidth >= this x baseline, and the outlier cut */
    double mad_k;              /* outlier: this many MADs below the median */
    dl_pf_pairs_t pairs;
    int scopes;                /* bit 0 node, 1 rail, 2 pair, 3 plan */
    dl_measure_opts_t mo;      /* bandwidth measurement */
    double timeout_s;          /* one step making no progress this long: broke */
    const dl_record_t *baseline;  /* a run read by dl_an_load (rank 0), or NULL */
    const char *baseline_path;
    const dl_system_t *system; /* --system's description (its "gpu" figures), or NULL */
    /* What world bandwidth is judged against without a baseline row: the
     * modelling backend (DL_CAP_MODELLED) with its options from
     * preflight's (--system), or be NULL. */
    struct dl_pf_model {
        const dl_backend_ops_t *be;
        const void *opts;
    } model;
    int gpu_checks;            /* NVML health, 0 = skip */
    double max_temp_c;         /* gpu: warn above */
    const char *json_path;     /* where rank 0 writes the document (NULL: nowhere) */
    const char *prom_path;     /* and the verdict's gauges (NULL: nowhere) */
    dl_inject_t inject;        /* DLCOMM_INJECT, parsed by the command */
    /* Where the collectives run: the world checks and the scopes may each
     * go through their own backend (a worker session of one profile: see
     * dl_session_ops); opts is what its init gets (the session), NULL for
     * a backend in these processes (mpi). */
    struct dl_pf_backend {
        const dl_backend_ops_t *be;
        void *opts;
        const char *profile;  /* the profile it runs under, for the record */
    } on_world, on_scopes;
    int modelled;              /* the backend is a model (sim): no data is checked */
} dl_pf_opts_t;

/* Which ranks share a host (the same on every rank). */
typedef struct {
    int nranks, nhosts, max_local;
    int *host_of;   /* [nranks] host index, in order of first appearance */
    int *local_of;  /* [nranks] rank among its host's ranks */
    int dev_local;  /* this rank's place on its machine: the GPU it takes, local rank
                     * modulo the devices, as the nccl backend (hosts of their own,
                     * DLCOMM_SHARED_GPU, may share a machine and a GPU) */
    char (*names)[256]; /* [nhosts] host names */
} dl_pf_layout_t;

dl_status_t dl_pf_layout_build(MPI_Comm world, dl_pf_layout_t *l);
/* From already gathered names (one per rank, 256 chars each). */
dl_status_t dl_pf_layout_from_names(const char *names, int nranks, dl_pf_layout_t *l);
void dl_pf_layout_free(dl_pf_layout_t *l);

/* Disjoint rounds of host pairs. partner[r * nhosts + h] = the host paired
 * with h in round r, or -1 (a bye). All pairs: the circle method, n-1 rounds
 * (n even) or n (n odd), each pair exactly once. Ring: (h, h+1 mod n) in 2
 * rounds (n even) or 3 (n odd). Returns the round count (0 for n < 2). */
int dl_pf_pair_rounds(int nhosts, dl_pf_pairs_t mode, int **partner);
dl_pf_pairs_t dl_pf_pairs_resolve(dl_pf_pairs_t mode, int nhosts);

/* Robust low outliers: low[i] = v[i] < min_fraction x median and, on the
 * log scale, more than k MADs below the median, the MAD taken as at least
 * DL_PF_LOG_MAD_FLOOR (with k = 2.5: a tight group's outlier is below 69%
 * of its median). Values < 0 are "not measured" and ignored. Returns how
 * many are low; *median receives the median of the measured values. */
int dl_pf_low_outliers(const double *v, int n, double min_fraction, double k, int *low,
                       double *median);

/* Runs every check on every rank of world; rank 0 fills *doc (the JSON
 * document: checks, scopes, suspects, verdict) and prints one line per
 * check. Returns DL_OK (pass or warn), DL_ERR_CHECK (a check failed) or the
 * error that broke the run. */
dl_status_t dl_preflight_run(const dl_pf_opts_t *o, MPI_Comm world, cJSON *doc);

/* A modelled fleet (--fleet): the adaptive planner against a model of
 * nodes, each probe's time from o->model (the system description), with
 * faults and noise; no ranks, no MPI. Prints the rounds, the check lines
 * and the VERDICT line; fills doc as dl_preflight_run does, plus "fleet". */
typedef struct {
    int nodes;
    const char *faults;   /* "node:17:1.2,link:3:4:1.5,rail:2:1.3,flap:9:2:0.5" */
    double noise;         /* sd of each iteration's log time */
    double target;        /* the smallest slowdown to separate (0.2: 20%) */
    long seed;
    int group;            /* hosts in a screen probe */
} dl_pf_fleet_opts_t;
dl_status_t dl_pf_fleet_run(const dl_pf_opts_t *o, const dl_pf_fleet_opts_t *f, cJSON *doc);

/* The finished document as one HTML page: the verdict, the pair matrix as
 * a heat map (slow cells marked), the checks; written atomically. */
dl_status_t dl_pf_html(const char *path, const cJSON *doc);

/* The finished document's verdict as node_exporter textfile gauges
 * (metrics.c says which), written atomically to path. */
dl_status_t dl_pf_prometheus(const char *path, const cJSON *doc);

#endif
