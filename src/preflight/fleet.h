/* The modelled fleet (fleet.c): a pf_prober_t over N nodes whose probe
 * times come from the modelling backend, with faults and noise. */
#ifndef DL_PF_FLEET_H
#define DL_PF_FLEET_H

#include "../backends/backends.h"
#include "plan.h"

typedef enum { PF_FAULT_NODE, PF_FAULT_LINK, PF_FAULT_RAIL, PF_FAULT_FLAP } pf_fault_kind_t;

typedef struct {
    pf_fault_kind_t kind;
    int a, b;       /* host (a link: both), or rail */
    double factor;  /* the bandwidth part of a call takes this much longer */
    double p;       /* flap: the share of iterations it is slow in */
} pf_fault_t;

#define PF_FLEET_MAX_FAULTS 8
#define PF_FLEET_CACHE 64
/* A round's communicator set-up on a real fleet: each group's own (0.3 -
 * 0.6 s measured on an H200, docs/preflight.md), all groups at once. */
#define PF_FLEET_SETUP_S 0.5

typedef struct {
    pf_prober_t pr;
    const dl_backend_ops_t *be;
    const void *opts;
    double noise;
    uint64_t rng;
    pf_fault_t faults[PF_FLEET_MAX_FAULTS];
    int nfaults;
    struct { int n; uint64_t bytes; double t; } cache[PF_FLEET_CACHE];
    int ncache;
    int *probe_of, *pos_of;            /* [nhosts], during a round */
    double *lat, *bw, *slow;           /* [nprobes] of the round */
    unsigned *flaps;
} pf_fleet_t;

/* A comma list of faults (one line on stderr and DL_ERR_USAGE if wrong). */
dl_status_t pf_faults_parse(const char *list, int nhosts, int nrails, pf_fault_t *out, int *n);
const char *pf_fault_kind_str(pf_fault_kind_t k);
dl_status_t pf_fleet_open(pf_fleet_t *m, const dl_backend_ops_t *be, const void *opts, int nhosts,
                          int nrails, double noise, uint64_t seed);
void pf_fleet_close(pf_fleet_t *m);

#endif
