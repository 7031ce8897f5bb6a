/* The sim's model: time of one call on M = nodes x gpus_per_node modelled
 * ranks (not the MPI processes carrying the protocol), ring all-reduce for
 * example:
 *   launch + 2(M-1) x (path latency + protocol latency)
 *          + 2(M-1)/M x bytes / (min(path bw) x path efficiency x protocol factor)
 * The bytes each rank moves come from the collective's bus factor (one
 * place); the steps per collective from the table below. */
#include "sim.h"

#include <math.h>
#include <stdlib.h>

const char *const sim_proto_names[SIM_NPROTOS] = {"LL", "LL128", "Simple"};
/* LL carries 4 bytes of flag per 4 of data; LL128 8 per 120; Simple pays
 * for its fences in latency. */
static const double proto_bw[SIM_NPROTOS] = {0.5, 0.92, 1.0};
static const double proto_lat_us[SIM_NPROTOS] = {0.3, 0.6, 2.0};
#define TREE_BW 0.9 /* a tree's pipelines keep its links a little less busy */

/* Latency steps of one call on m ranks, gpn a node, over nodes. */
typedef double (*steps_fn)(int m, int gpn, int nodes, int tree);

static double steps_allreduce(int m, int gpn, int nodes, int tree)
{
    return tree ? 2.0 * (gpn - 1 + ceil(log2(nodes))) : 2.0 * (m - 1);
}

static double steps_one(int m, int gpn, int nodes, int tree)
{
    (void)m, (void)gpn, (void)nodes, (void)tree;
    return 1;
}

/* A ring, and the pipelined chain of broadcast and reduce. */
static double steps_ring(int m, int gpn, int nodes, int tree)
{
    (void)gpn, (void)nodes, (void)tree;
    return m - 1;
}

/* The model's collectives: a new one is a line here (NULL: not modelled,
 * which supports says). */
static const steps_fn steps[] = {
    [DL_COLL_ALLREDUCE] = steps_allreduce, [DL_COLL_ALLGATHER] = steps_ring,
    [DL_COLL_BROADCAST] = steps_ring,      [DL_COLL_REDUCESCATTER] = steps_ring,
    [DL_COLL_ALLTOALL] = steps_ring,       [DL_COLL_SENDRECV] = steps_one,
    [DL_COLL_REDUCE] = steps_ring,         [DL_COLL_GATHER] = steps_ring,
    [DL_COLL_SCATTER] = steps_ring,        [DL_COLL_ALLTOALLV] = steps_ring,
};
_Static_assert(DL_ARRAY_SIZE(steps) == DL_COLL_COUNT, "an entry (or NULL) for every collective");

int sim_model_has(dl_coll_id_t id)
{
    return steps[id] != NULL;
}

void sim_model_init(sim_ctx_t *c, int nodes)
{
    c->nodes = nodes > 0 ? nodes : c->sys.nodes;
    c->model_ranks = c->nodes * c->sys.gpus_per_node;
    c->g_ranks = c->model_ranks;
    c->g_nodes = c->nodes;
    c->g_gpn = c->sys.gpus_per_node;
    c->g_share = 1;
}

static double model_us(const sim_ctx_t *c, const dl_case_t *k, int tree, int proto)
{
    int m = c->g_ranks, gpn = c->g_gpn, nodes = c->g_nodes;
    double bw = 1e30, lat = 0;
    if (gpn > 1) {
        bw = c->intra.bw;
        lat = c->intra.lat;
    }
    if (nodes > 1) { /* groups side by side share each node's NICs */
        double inter = c->inter.bw / c->g_share;
        bw = bw < inter ? bw : inter;
        lat = lat > c->inter.lat ? lat : c->inter.lat;
    }
    if (m == 1)
        return c->sys.launch_us;
    bw *= proto_bw[proto] * (tree ? TREE_BW : 1) * 1e3; /* bytes per us */
    lat += proto_lat_us[proto];
    double moved = k->coll->busbw_factor(m) * (double)k->counts.bytes;
    return c->sys.launch_us + steps[k->coll->id](m, gpn, nodes, tree) * lat + moved / bw;
}

/* The fastest algorithm and protocol allowed, as NCCL's tuner picks the
 * lowest modelled time: tree is all-reduce's only; ring stays when the
 * environment excludes it but leaves nothing else for the collective. */
double sim_pick(const sim_ctx_t *c, const dl_case_t *k, int *tree_out, int *proto_out)
{
    double best = 0;
    int tree_ok = k->coll->id == DL_COLL_ALLREDUCE && (c->algos & 2);
    for (int tree = 0; tree < 2; tree++) {
        if (tree ? !tree_ok : !(c->algos & 1) && tree_ok)
            continue;
        for (int p = 0; p < SIM_NPROTOS; p++) {
            if (!(c->protos & (1u << p)))
                continue;
            double t = model_us(c, k, tree, p);
            if (best == 0 || t < best) {
                best = t;
                *tree_out = tree;
                *proto_out = p;
            }
        }
    }
    return best;
}

double sim_best_us(const sim_ctx_t *c, const dl_case_t *k)
{
    int tree = 0, proto = 0;
    return sim_pick(c, k, &tree, &proto);
}

/* Counts of modelled ranks per (group, node): each rank's group is its
 * process's, process p carrying ranks [p M / P, (p + 1) M / P). */
static int *group_counts(const sim_ctx_t *c, const dl_split_t *sl)
{
    int M = c->model_ranks, P = sl->world, gpn = c->sys.gpus_per_node;
    int *cnt = calloc((size_t)sl->groups * (size_t)c->nodes, sizeof(int));
    for (int q = 0; cnt && q < M; q++)
        cnt[(size_t)dl_split_group(sl, (int)((long long)q * P / M)) * (size_t)c->nodes +
            (size_t)(q / gpn)]++;
    return cnt;
}

/* --split on the model: a modelled rank is in its process's group. Only
 * the NICs between nodes are shared by groups side by side (NVLink and
 * PCIe links are each GPU's own): a group spanning nodes gets its node's
 * NIC bandwidth divided by the spanning groups on that node. */
dl_status_t sim_model_groups(sim_ctx_t *c, const dl_split_t *sl, int world_rank)
{
    int M = c->model_ranks, G = sl->groups, N = c->nodes, mine = dl_split_group(sl, world_rank);
    int *cnt = group_counts(c, sl), *span = calloc((size_t)G, sizeof(int));
    dl_status_t st = cnt && span ? DL_OK : DL_ERR_NOMEM;
    for (int g = 0; st == DL_OK && g < G; g++) {
        int ranks = 0;
        for (int n = 0; n < N; n++) {
            ranks += cnt[(size_t)g * (size_t)N + (size_t)n];
            span[g] += cnt[(size_t)g * (size_t)N + (size_t)n] > 0;
        }
        if (ranks != M / G) {
            dl_err("sim: --split: the model's %d ranks over %d processes do not make %d equal "
                   "groups (run a number of processes that divides %d)", M, sl->world, G, M);
            st = DL_ERR_USAGE;
        }
    }
    c->g_ranks = M / G;
    c->g_nodes = st == DL_OK ? span[mine] : 1;
    c->g_gpn = c->g_share = 1;
    for (int n = 0; st == DL_OK && n < N; n++) {
        int here = cnt[(size_t)mine * (size_t)N + (size_t)n], sharing = 0;
        if (!here)
            continue;
        c->g_gpn = here > c->g_gpn ? here : c->g_gpn;
        for (int g = 0; g < G; g++)
            sharing += span[g] > 1 && cnt[(size_t)g * (size_t)N + (size_t)n] > 0;
        c->g_share = sharing > c->g_share ? sharing : c->g_share;
    }
    free(span);
    free(cnt);
    return st;
}
