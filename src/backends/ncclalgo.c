/* Which collectives an NCCL_ALGO value leaves NCCL no algorithm for. NCCL
 * (2.19-2.28) runs each collective with some of its algorithms only: Tree
 * (and CollNetChain, NVLSTree) all-reduce alone; broadcast and reduce Ring
 * alone; all-gather and reduce-scatter Ring, PAT, NVLS or CollNetDirect.
 * A profile forcing NCCL_ALGO=Tree would end in NCCL's "no algorithm/
 * protocol available" at its first all-gather; the nccl backend and the
 * sim leave such collectives out instead, saying why. Collectives NCCL
 * builds from send/recv (all-to-all, gather, scatter, send/recv) take no
 * algorithm and are never left out. */
#include "backends.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

enum { A_TREE, A_RING, A_COLLNET_DIRECT, A_COLLNET_CHAIN, A_NVLS, A_NVLS_TREE, A_PAT, A_COUNT };
static const char *const algo_names[A_COUNT] = {"Tree", "Ring", "CollnetDirect", "CollnetChain",
                                                "NVLS", "NVLSTree", "PAT"};
#define A(x) (1u << A_##x)

/* The algorithms NCCL has for a collective; 0: it takes none (send/recv). */
static unsigned algos_of(int coll)
{
    switch (coll) {
    case DL_COLL_ALLREDUCE:
        return A(TREE) | A(RING) | A(COLLNET_DIRECT) | A(COLLNET_CHAIN) | A(NVLS) | A(NVLS_TREE);
    case DL_COLL_ALLGATHER:
    case DL_COLL_REDUCESCATTER:
        return A(RING) | A(COLLNET_DIRECT) | A(NVLS) | A(PAT);
    case DL_COLL_BROADCAST:
    case DL_COLL_REDUCE:
        return A(RING);
    default:
        return 0;
    }
}

unsigned dl_nccl_env_list(const char *v, const char *const *names, int n, int *unknown)
{
    *unknown = 0;
    if (!v || !*v)
        return 0;
    char buf[128];
    int neg = v[0] == '^';
    if (strpbrk(v, ":;") || (size_t)snprintf(buf, sizeof(buf), "%s", v + neg) >= sizeof(buf)) {
        *unknown = 1; /* NCCL's per-function form, or longer than any list of names */
        return 0;
    }
    unsigned m = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
        int i = 0;
        while (i < n && strcasecmp(w, names[i]) != 0)
            i++;
        if (i < n)
            m |= 1u << i;
        else
            *unknown = 1;
    }
    return neg ? ((1u << n) - 1) & ~m : m;
}

/* The algorithms a value enables; 0 when it says something this does not
 * read (NCCL itself then warns, and nothing is left out on a guess). */
static unsigned enabled(const char *v)
{
    int unknown;
    unsigned m = dl_nccl_env_list(v, algo_names, A_COUNT, &unknown);
    return unknown ? 0 : m;
}

unsigned dl_nccl_algo_colls_off(const char *nccl_algo, char *why, size_t len)
{
    unsigned on = enabled(nccl_algo), off = 0;
    for (int c = 0; on && c < DL_COLL_COUNT; c++)
        if (algos_of(c) && !(algos_of(c) & on))
            off |= 1u << c;
    if (why && len)
        snprintf(why, len, off ? "NCCL_ALGO=%s leaves NCCL no algorithm for it" : "", nccl_algo);
    return off;
}

void dl_nccl_algos_of(int coll, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < A_COUNT && at < len; i++)
        if (algos_of(coll) & (1u << i))
            at += (size_t)snprintf(out + at, len - at, "%s%s", at ? ", " : "", algo_names[i]);
}
