/*
 * One GPU's copy bandwidth, as DCGM-style diagnostics measure it and the
 * collectives cannot: device memory to device memory, and host to device /
 * device to host from pinned memory on the rank's own NUMA node. Each figure
 * is judged against what the GPU should reach: the system description's
 * `gpu` figures when given, else NVML's maximum PCIe generation x width.
 * Needs no MPI: one process, one GPU (the one the nccl backend picks for
 * the same local rank). The measuring half is built with the nccl backend
 * (the CUDA runtime); without it every figure is a SKIP that says so.
 */
#ifndef DL_PF_GPUCOPY_H
#define DL_PF_GPUCOPY_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "preflight.h"

typedef enum { DL_GC_D2D, DL_GC_H2D, DL_GC_D2H, DL_GC_NKINDS } dl_gc_kind_t;
/* The check names: "gpu-copy", "h2d", "d2h". */
extern const char *const dl_gc_check_names[DL_GC_NKINDS];

/* Default size and repeats: 256 MiB x 5 timed copies (after one untimed),
 * about 0.15 s of copying over a PCIe gen5 x16 link. */
#define DL_GC_BYTES (256ULL << 20)
#define DL_GC_REPEATS 5
/* A copy that has not finished by then is a FAIL (never a hang). */
#define DL_GC_DEADLINE_S 10.0

typedef struct {
    int device;               /* CUDA device index; -1: none */
    char bus_id[32];          /* "0000:17:00.0" */
    int gpu_numa;             /* NUMA node of the GPU (hwloc logical index), -1 unknown */
    int rank_numa;            /* the one NUMA node of the rank's CPU binding, -1 none */
    int mem_numa;             /* where the pinned host buffer's pages are */
    int cpu_numa;             /* where the thread that issued the copies ran */
    uint64_t bytes;
    int repeats;
    double gbps[DL_GC_NKINDS]; /* median of the repeats, bytes copied / time; -1 not measured */
    int shared;               /* 1: another rank of the host measures this GPU (a SKIP) */
    char why[256];            /* reason of a SKIP (DL_ERR_UNAVAILABLE) or of a FAIL */
} dl_gc_result_t;

/* The CUDA device of this local rank (local_rank modulo the devices, as the
 * nccl backend picks it) and its bus id, without measuring: ranks that
 * share a GPU find out from it which one measures. DL_ERR_UNAVAILABLE (no
 * GPU, no CUDA in this build) or DL_ERR_COMM, the reason in why. */
dl_status_t dl_gc_device(int local_rank, int *device, char *bus_id, size_t len, char *why,
                         size_t wlen);
/* Measures the GPU of this local rank (local_rank modulo the devices).
 * DL_OK: measured; DL_ERR_UNAVAILABLE: no GPU or no CUDA in this build, the
 * reason in r->why; DL_ERR_COMM: a CUDA call failed or a copy missed its
 * deadline, the CUDA error string in r->why. Releases what it allocated,
 * and the device's primary context (cudaDeviceReset: a process that keeps
 * CUDA state of its own must not call it). */
dl_status_t dl_gc_measure(int local_rank, uint64_t bytes, int repeats, dl_gc_result_t *r);
cJSON *dl_gc_json(const dl_gc_result_t *r);

/* PCIe line rate per direction in GB/s (1e9 bytes) of a link: GT/s per
 * lane x lanes x encoding / 8 (gen1-2 8b/10b, gen3-5 128b/130b, gen6 FLIT
 * 236/256); -1 for an unknown generation or width. */
double dl_gc_pcie_gbps(int gen, int width);

/* Stated efficiencies: a pinned cudaMemcpy over PCIe reaches about this
 * fraction of line rate; a device copy reads and writes every byte, so it
 * reaches about this fraction of half the memory bandwidth. */
#define DL_GC_PCIE_EFFICIENCY 0.80
#define DL_GC_HBM_EFFICIENCY 0.80
/* measured / expected: PASS at or above DL_GC_PASS_FRACTION, WARN down to
 * DL_GC_FAIL_FRACTION, FAIL below (a link at half width or half its
 * generation gives about 0.55). */
#define DL_GC_PASS_FRACTION 0.75
#define DL_GC_FAIL_FRACTION 0.60

/* The system description's optional "gpu" figures (-1 when absent). */
typedef struct dl_gc_system {
    double memory_gbyte_s;    /* device memory (HBM) bandwidth */
    double host_link_gbyte_s; /* line rate per direction of the GPU's host link */
} dl_gc_system_t;
/* Those of a system description (sys/system.h read it; NULL: none). */
struct dl_system;
void dl_gc_system_from(const struct dl_system *sys, dl_gc_system_t *s);

typedef struct {
    double gbps;       /* what the figure should reach; -1: no expectation */
    char source[200];  /* where that came from, in words */
} dl_gc_expect_t;
/* The expectation of one figure: the system's figure when it has one, else
 * (H2D/D2H) NVML's maximum generation x width; the device copy has none
 * without the system's memory figure. */
void dl_gc_expect(dl_gc_kind_t k, const dl_gc_system_t *s, int gen_max, int width_max,
                  dl_gc_expect_t *e);
/* measured against expected: PASS, WARN or FAIL (PASS when expected < 0:
 * a figure with nothing to judge it by is reported, not judged). */
dl_pf_status_t dl_gc_judge(double measured, double expected);

#endif
