/*
 * dlcomm's NCCL profiler plugin: what NCCL chose for a call.
 *
 * NCCL tells a profiler plugin, for each collective it launches, the
 * algorithm, protocol and channel count of its plan (profiler interface
 * v5, NCCL 2.28 on). This library is that plugin, and nothing more: the
 * nccl backend loads it first (dlopen of the same path, so NCCL's later
 * dlopen returns this very copy), points NCCL_PROFILER_PLUGIN at it, arms
 * it around the one checked call of a row and takes what it saw. Unarmed,
 * its event mask is 0: NCCL then asks nothing of it during the timed calls
 * (one load of the mask per group).
 *
 * Only the descriptor fields dlcomm reads are declared; their order and
 * types are the interface's v5 layout, which NCCL keeps for a version.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EV_COLL (1 << 1) /* the interface's event kinds dlcomm asks for */
#define EV_P2P (1 << 2)

typedef struct {
    uint64_t type;
    void *parent;
    int rank;
    union {
        struct {
            uint64_t seq;
            const char *func;
            const void *sendbuf;
            void *recvbuf;
            size_t count;
            int root;
            const char *dtype;
            uint8_t nchannels, nwarps;
            const char *algo, *proto;
            void *group;
        } coll;
        struct {
            const char *func;
            void *buf;
            const char *dtype;
            size_t count;
            int peer;
            uint8_t nchannels;
            void *group;
        } p2p;
    };
} descr_v5_t;

typedef void (*logfn_t)(int level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...);

/* What the armed window saw (the last collective's plan; point-to-point
 * calls, which have no algorithm, as "P2P" with their most channels). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int *g_mask;  /* NCCL's activation mask, read at each group's start */
static int g_seen;
static char g_algo[16], g_proto[16];
static int g_nch;

static int plugin_init(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes,
                       int nranks, int rank, logfn_t log)
{
    (void)comm_id, (void)name, (void)nnodes, (void)nranks, (void)rank, (void)log;
    pthread_mutex_lock(&g_lock);
    g_mask = mask; /* one mask for every communicator of the process */
    pthread_mutex_unlock(&g_lock);
    *ctx = &g_lock; /* any non-NULL context */
    return 0;
}

static void see_coll(const descr_v5_t *d)
{
    snprintf(g_algo, sizeof(g_algo), "%s", d->coll.algo ? d->coll.algo : "");
    snprintf(g_proto, sizeof(g_proto), "%s", d->coll.proto ? d->coll.proto : "");
    g_nch = d->coll.nchannels;
    g_seen++;
}

static void see_p2p(const descr_v5_t *d)
{
    if (g_seen == 0 || strcmp(g_algo, "P2P") != 0) {
        snprintf(g_algo, sizeof(g_algo), "P2P");
        g_proto[0] = '\0';
        g_nch = 0;
    }
    if (d->p2p.nchannels > g_nch)
        g_nch = d->p2p.nchannels;
    g_seen++;
}

static int plugin_start(void *ctx, void **handle, descr_v5_t *d)
{
    (void)ctx;
    *handle = NULL; /* nothing to stop: NCCL skips a NULL handle */
    pthread_mutex_lock(&g_lock);
    if (d->type == EV_COLL)
        see_coll(d);
    else if (d->type == EV_P2P)
        see_p2p(d);
    pthread_mutex_unlock(&g_lock);
    return 0;
}

static int plugin_stop(void *handle)
{
    (void)handle;
    return 0;
}

static int plugin_state(void *handle, int state, void *args)
{
    (void)handle, (void)state, (void)args;
    return 0;
}

static int plugin_finalize(void *ctx)
{
    (void)ctx;
    return 0;
}

/* The table NCCL looks up by name. */
struct {
    const char *name;
    int (*init)(void **, uint64_t, int *, const char *, int, int, int, logfn_t);
    int (*start)(void *, void **, descr_v5_t *);
    int (*stop)(void *);
    int (*state)(void *, int, void *);
    int (*finalize)(void *);
} ncclProfiler_v5 = {"dlcomm-choice", plugin_init, plugin_start, plugin_stop, plugin_state,
                     plugin_finalize};

/* ---- dlcomm's side (dlsym'd by the nccl backend) ---- */

/* Arms (on) or disarms the plugin; arming forgets what was seen. Returns
 * 0 when NCCL has not initialised the plugin (no communicator yet). */
int dlcomm_choice_arm(int on)
{
    pthread_mutex_lock(&g_lock);
    int ok = g_mask != NULL;
    if (ok)
        __atomic_store_n(g_mask, on ? EV_COLL | EV_P2P : 0, __ATOMIC_RELAXED);
    if (on)
        g_seen = 0, g_algo[0] = g_proto[0] = '\0', g_nch = 0;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

/* What the armed window saw; returns how many events (0: nothing). */
int dlcomm_choice_take(char *algo, size_t alen, char *proto, size_t plen, int *nchannels)
{
    pthread_mutex_lock(&g_lock);
    int n = g_seen;
    snprintf(algo, alen, "%s", n ? g_algo : "");
    snprintf(proto, plen, "%s", n ? g_proto : "");
    *nchannels = n ? g_nch : 0;
    pthread_mutex_unlock(&g_lock);
    return n;
}
