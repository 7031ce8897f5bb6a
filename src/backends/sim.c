/* The sim backend: an analytic (alpha-beta) model of a system description
 * (a file in topologies/systems), for planning at scales no one has here and
 * for running the whole pipeline on machines without GPUs. It runs in a
 * worker like nccl and reads the same NCCL_* variables the profile set:
 *   path inside a node  NVLink/PCIe (P2P) -> host memory (NCCL_P2P_DISABLE=1)
 *                       -> the network (and NCCL_SHM_DISABLE=1)
 *   path between nodes  IB (GPUDirect unless NCCL_NET_GDR_LEVEL=LOC) or
 *                       sockets (NCCL_NET=Socket, NCCL_IB_DISABLE=1, no NIC)
 *   algorithm/protocol  NCCL_ALGO (Ring, Tree: all-reduce only) and NCCL_PROTO
 *                       (LL, LL128, Simple); unset: the fastest, as NCCL tunes.
 * Time of one call on M = nodes x gpus_per_node modelled ranks (not the MPI
 * processes carrying the protocol), ring all-reduce for example:
 *   launch + 2(M-1) x (path latency + protocol latency)
 *          + 2(M-1)/M x bytes / (min(path bw) x path efficiency x protocol factor)
 * Every call gets a small deterministic jitter (the system's "jitter", as a
 * fraction), so statistics behave as for a measurement and runs repeat
 * exactly. No data moves: results are not checked (backend_info says so). */
#include "backends.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../engine/engine.h" /* dl_data_find: the system search path */

typedef struct {
    double bw, lat, eff; /* GB/s per GPU per direction (socket: per node), us, fraction */
} sim_path_t;

enum { P_NVLINK, P_PCIE, P_SHM, P_IB, P_SOCKET, P_COUNT };
static const char *const path_names[P_COUNT] = {"nvlink", "pcie", "shm", "ib", "socket"};

/* The sim's own options (sweep --system, --sim-nodes). */
typedef struct {
    const char *system; /* a name or path; setup makes it the file's path */
    long nodes;         /* 0: the file's */
} sim_opts_t;

typedef struct {
    char name[64];
    int gpus_per_node, nodes, p2p, nics, gdr;
    double nic_gbit, launch_us, jitter;
    sim_path_t path[P_COUNT];
} sim_system_t;

enum { PR_LL, PR_LL128, PR_SIMPLE, PR_COUNT };
static const char *const proto_names[PR_COUNT] = {"LL", "LL128", "Simple"};
/* LL carries 4 bytes of flag per 4 of data; LL128 8 per 120; Simple pays
 * for its fences in latency. */
static const double proto_bw[PR_COUNT] = {0.5, 0.92, 1.0};
static const double proto_lat_us[PR_COUNT] = {0.3, 0.6, 2.0};
#define TREE_BW 0.9 /* a tree's pipelines keep its links a little less busy */

typedef struct {
    sim_system_t sys;
    int rank, nranks, model_ranks, nodes;
    /* The modelled group this process's figures are for (--split; else the
     * whole model): its ranks, the nodes it spans, its most ranks on one
     * node, and how many spanning groups share a node's NICs with it. */
    int g_ranks, g_nodes, g_gpn, g_share;
    sim_path_t intra, inter; /* effective hops: bw already x efficiency */
    const char *intra_name, *inter_name;
    unsigned algos, protos; /* bit 0 ring, 1 tree; bit i = proto i */
    uint32_t id_sum;
    uint64_t calls;
} sim_ctx_t;

/* ---- the system description ---- */

#define DL_SIM_MAX_GPN 1024        /* GPUs (or NICs) of one node */
#define DL_SIM_MAX_RANKS (1 << 20) /* nodes x GPUs a node */

static dl_status_t sys_bad(const char *path, const char *what, const char *name)
{
    dl_err("system %s: %s%s%s", path, what, name ? " " : "", name ? name : "");
    return DL_ERR_INPUT;
}

static dl_status_t num(const char *path, const cJSON *o, const char *key, double min, double def,
                       double *out)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    if (!v) {
        if (def < 0)
            return sys_bad(path, "missing", key);
        *out = def;
        return DL_OK;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < min)
        return sys_bad(path, "must be a number of at least the minimum:", key);
    *out = v->valuedouble;
    return DL_OK;
}

/* A count (GPUs, nodes, NICs): a whole number in [min, max], so that it
 * and the ranks made of it fit an int (2^63 nodes was SIGFPE). */
static dl_status_t count(const char *path, const cJSON *o, const char *key, double min, double max,
                         double def, double *out)
{
    dl_status_t st = num(path, o, key, min, def, out);
    if (st == DL_OK && (*out > max || *out != (double)(long long)*out)) {
        char what[96];
        snprintf(what, sizeof(what), "must be a whole number from %.0f to %.0f:", min, max);
        return sys_bad(path, what, key);
    }
    return st;
}

static dl_status_t parse_paths(const char *file, const cJSON *ps, sim_system_t *s)
{
    if (!cJSON_IsObject(ps))
        return sys_bad(file, "\"paths\" must be an object", NULL);
    const cJSON *p;
    cJSON_ArrayForEach(p, ps)
    {
        int k;
        for (k = 0; k < P_COUNT && strcmp(p->string, path_names[k]); k++)
            ;
        if (k == P_COUNT)
            return sys_bad(file, "unknown path (nvlink, pcie, shm, ib, socket):", p->string);
        if (!cJSON_IsObject(p)) /* an array's items have no names to check */
            return sys_bad(file, "a path must be an object:", p->string);
        const cJSON *f;
        cJSON_ArrayForEach(f, p)
            if (strcmp(f->string, "bw_gbyte_s") && strcmp(f->string, "lat_us") &&
                strcmp(f->string, "efficiency"))
                return sys_bad(file, "unknown key in a path:", f->string);
        double bw = 0, lat, eff;
        dl_status_t st = num(file, p, "bw_gbyte_s", 0, k == P_IB ? 0 : -1, &bw);
        if (st == DL_OK)
            st = num(file, p, "lat_us", 0, -1, &lat);
        if (st == DL_OK)
            st = num(file, p, "efficiency", 0.01, 1.0, &eff);
        if (st != DL_OK)
            return st;
        s->path[k] = (sim_path_t){bw, lat, eff > 1 ? 1 : eff};
    }
    if (s->path[P_SHM].bw <= 0 || s->path[P_SOCKET].bw <= 0)
        return sys_bad(file, "\"paths\" needs at least shm and socket", NULL);
    return DL_OK;
}

/* "gpu": figures preflight's copy checks judge by (the model does not use
 * them); each optional, each a positive number. */
static dl_status_t parse_gpu(const char *file, const cJSON *g)
{
    if (!g)
        return DL_OK;
    if (!cJSON_IsObject(g))
        return sys_bad(file, "\"gpu\" must be an object", NULL);
    const cJSON *f;
    double v;
    cJSON_ArrayForEach(f, g)
    {
        if (strcmp(f->string, "memory_gbyte_s") && strcmp(f->string, "host_link_gbyte_s"))
            return sys_bad(file, "unknown key in \"gpu\" (memory_gbyte_s, host_link_gbyte_s):",
                           f->string);
        if (num(file, g, f->string, 0.001, -1, &v) != DL_OK)
            return DL_ERR_INPUT;
    }
    return DL_OK;
}

static dl_status_t parse_system(const char *file, const cJSON *j, sim_system_t *s)
{
    static const char *const keys[] = {"name", "description", "gpus_per_node", "nodes", "p2p",
                                       "nics", "launch_us", "jitter", "paths", "source", "gpu"};
    if (!cJSON_IsObject(j))
        return sys_bad(file, "not a JSON object", NULL);
    const cJSON *v;
    cJSON_ArrayForEach(v, j)
    {
        size_t k;
        for (k = 0; k < DL_ARRAY_SIZE(keys) && strcmp(v->string, keys[k]); k++)
            ;
        if (k == DL_ARRAY_SIZE(keys))
            return sys_bad(file, "unknown key", v->string);
    }
    const cJSON *name = cJSON_GetObjectItem(j, "name");
    if (!cJSON_IsString(name))
        return sys_bad(file, "missing \"name\"", NULL);
    snprintf(s->name, sizeof(s->name), "%s", name->valuestring);
    double g, n, nics = 0, gbit = 0;
    dl_status_t st = count(file, j, "gpus_per_node", 1, DL_SIM_MAX_GPN, -1, &g);
    if (st == DL_OK)
        st = count(file, j, "nodes", 1, DL_SIM_MAX_RANKS, 1, &n);
    if (st == DL_OK)
        st = num(file, j, "launch_us", 0, 5, &s->launch_us);
    if (st == DL_OK)
        st = num(file, j, "jitter", 0, 0.005, &s->jitter);
    const cJSON *nic = cJSON_GetObjectItem(j, "nics");
    if (st == DL_OK && nic) {
        st = count(file, nic, "count", 0, DL_SIM_MAX_GPN, -1, &nics);
        if (st == DL_OK)
            st = num(file, nic, "speed_gbit_s", 0, nics > 0 ? -1 : 0, &gbit);
        s->gdr = !cJSON_IsFalse(cJSON_GetObjectItem(nic, "gdr"));
    }
    if (st != DL_OK)
        return st;
    s->gpus_per_node = (int)g;
    s->nodes = (int)n;
    s->nics = (int)nics;
    s->nic_gbit = gbit;
    s->p2p = !cJSON_IsFalse(cJSON_GetObjectItem(j, "p2p"));
    st = parse_gpu(file, cJSON_GetObjectItem(j, "gpu"));
    if (st == DL_OK)
        st = parse_paths(file, cJSON_GetObjectItem(j, "paths"), s);
    if (st == DL_OK && s->nics > 0 && s->path[P_IB].lat <= 0)
        return sys_bad(file, "NICs need a \"paths\".ib entry (lat_us, efficiency)", NULL);
    return st;
}

static dl_status_t load_system(const char *file, sim_system_t *s)
{
    char *text = NULL;
    size_t len = 0;
    memset(s, 0, sizeof(*s));
    if (!file || !*file || dl_read_file(file, &text, &len) != DL_OK)
        return sys_bad(file ? file : "(none)", "cannot be read", NULL);
    cJSON *j = dl_json_parse_whole(text, len);
    dl_status_t st = j ? parse_system(file, j, s) : sys_bad(file, "is not valid JSON", NULL);
    cJSON_Delete(j);
    free(text);
    return st;
}

dl_status_t dl_sim_system_check(const char *path, int *nodes, int *gpus_per_node)
{
    sim_system_t s;
    dl_status_t st = load_system(path, &s);
    if (st == DL_OK) {
        *nodes = s.nodes;
        *gpus_per_node = s.gpus_per_node;
    }
    return st;
}

/* ---- what the profile's environment selects ---- */

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* NCCL_ALGO / NCCL_PROTO: "A,B" selects, "^A" excludes; unset: all. */
static unsigned env_select(const char *name, const char *const *names, int n)
{
    const char *v = getenv(name);
    unsigned all = (1u << n) - 1, m = 0;
    if (!v || !*v)
        return all;
    int neg = v[0] == '^';
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", v + neg);
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save))
        for (int i = 0; i < n; i++)
            if (strcasecmp(w, names[i]) == 0)
                m |= 1u << i;
    m = neg ? all & ~m : m;
    return m ? m : all; /* nothing this model knows: NCCL's own choice */
}

/* The network hop, per node (sockets) or per NIC (IB). */
static sim_path_t net_path(const sim_ctx_t *c, int per_gpu, const char **name)
{
    const sim_system_t *s = &c->sys;
    const char *net = getenv("NCCL_NET");
    int ib = s->nics > 0 && !env_on("NCCL_IB_DISABLE") && !(net && strcasecmp(net, "Socket") == 0);
    if (!ib) {
        *name = "socket";
        sim_path_t p = s->path[P_SOCKET];
        p.bw *= p.eff / (per_gpu ? s->gpus_per_node : 1);
        return p;
    }
    const char *gdr = getenv("NCCL_NET_GDR_LEVEL");
    int gdr_on = s->gdr && !(gdr && (strcasecmp(gdr, "LOC") == 0 || strcmp(gdr, "0") == 0));
    *name = gdr_on ? "ib (gpudirect)" : "ib (staged through host memory)";
    sim_path_t p = s->path[P_IB];
    double nic = s->nic_gbit / 8.0 * p.eff; /* GB/s per NIC */
    p.bw = per_gpu ? nic * (s->nics < s->gpus_per_node ? (double)s->nics / s->gpus_per_node : 1)
                   : nic * s->nics;
    if (!gdr_on) { /* a bounce through host memory: its bandwidth and a copy's latency */
        double host = s->path[P_SHM].bw * s->path[P_SHM].eff * (per_gpu ? 1 : s->gpus_per_node);
        p.bw = p.bw < host ? p.bw : host;
        p.lat += s->path[P_SHM].lat;
    }
    return p;
}

static void select_paths(sim_ctx_t *c)
{
    const sim_system_t *s = &c->sys;
    int p2p = s->p2p && !env_on("NCCL_P2P_DISABLE");
    int k = !p2p ? -1 : s->path[P_NVLINK].bw > 0 ? P_NVLINK : P_PCIE;
    if (k < 0 && !env_on("NCCL_SHM_DISABLE"))
        k = P_SHM;
    if (k >= 0) {
        c->intra = s->path[k];
        c->intra.bw *= c->intra.eff;
        c->intra_name = path_names[k];
    } else {
        c->intra = net_path(c, 1, &c->intra_name);
    }
    c->inter = net_path(c, 0, &c->inter_name);
    c->algos = env_select("NCCL_ALGO", (const char *const[]){"Ring", "Tree"}, 2);
    c->protos = env_select("NCCL_PROTO", proto_names, PR_COUNT);
}

/* ---- the model ---- */

static double model_us(const sim_ctx_t *c, const dl_case_t *k, int tree, int proto)
{
    const sim_system_t *s = &c->sys;
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
        return s->launch_us;
    bw *= proto_bw[proto] * (tree ? TREE_BW : 1) * 1e3; /* bytes per us */
    lat += proto_lat_us[proto];
    /* Bytes each rank moves: the collective's bus factor says it (one place). */
    double b = (double)k->counts.bytes, moved = k->coll->busbw_factor(m) * b, steps;
    switch (k->coll->id) {
    case DL_COLL_ALLREDUCE:
        steps = tree ? 2.0 * (gpn - 1 + ceil(log2(nodes))) : 2.0 * (m - 1);
        break;
    case DL_COLL_SENDRECV: steps = 1; break;
    default: steps = m - 1; break; /* rings, and the pipelined chain of broadcast/reduce */
    }
    return s->launch_us + steps * lat + moved / bw;
}

/* The fastest allowed algorithm and protocol, as NCCL's tuner picks. */
static double best_us(const sim_ctx_t *c, const dl_case_t *k)
{
    double best = 0;
    int tree_ok = k->coll->id == DL_COLL_ALLREDUCE && (c->algos & 2);
    for (int tree = 0; tree < 2; tree++) {
        if (tree ? !tree_ok : !(c->algos & 1) && tree_ok)
            continue;
        for (int p = 0; p < PR_COUNT; p++) {
            if (!(c->protos & (1u << p)))
                continue;
            double t = model_us(c, k, tree, p);
            if (best == 0 || t < best)
                best = t;
        }
    }
    return best;
}

/* A deterministic value in [-1, 1] per (rank, call). */
static double jitter(uint64_t rank, uint64_t call)
{
    uint64_t x = (rank + 1) * 0x9E3779B97F4A7C15ull ^ (call + 1) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    return (double)(x >> 11) / (double)(1ull << 52) - 1.0;
}

/* Channel lines in NCCL's words for the paths modelled, in the worker's
 * NCCL_DEBUG_FILE: the supervisor's check of what a profile really used
 * then runs on machines without GPUs too. */
static const char *nccl_via(const char *path)
{
    if (strcmp(path, "nvlink") == 0 || strcmp(path, "pcie") == 0)
        return "P2P/CUMEM";
    if (strcmp(path, "shm") == 0)
        return "SHM/direct/direct";
    if (strcmp(path, "socket") == 0)
        return "NET/Socket/0";
    return strstr(path, "gpudirect") ? "NET/IB/0/GDRDMA" : "NET/IB/0";
}

static void emulate_debug_log(const sim_ctx_t *c)
{
    const char *file = getenv("NCCL_DEBUG_FILE"), *level = getenv("NCCL_DEBUG");
    if (!file || !level || strcasecmp(level, "INFO") != 0)
        return;
    FILE *f = fopen(file, "w");
    if (!f)
        return;
    int gpn = c->sys.gpus_per_node, r = c->rank % c->model_ranks;
    fprintf(f, "sim:%d:%d [%d] NCCL INFO dlcomm sim backend: modelled channels, no NCCL ran\n",
            (int)getpid(), (int)getpid(), r % gpn);
    if (gpn > 1)
        fprintf(f, "sim:%d:%d [%d] NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] via %s\n",
                (int)getpid(), (int)getpid(), r % gpn, r, r % gpn, (r + 1) % c->model_ranks,
                (r + 1) % gpn, nccl_via(c->intra_name));
    if (c->nodes > 1)
        fprintf(f, "sim:%d:%d [%d] NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] [send] via %s\n",
                (int)getpid(), (int)getpid(), r % gpn, r, r % gpn, (r + gpn) % c->model_ranks,
                r % gpn, nccl_via(c->inter_name));
    fclose(f);
}

/* ---- the ops ---- */

static dl_status_t sim_probe(char *why, size_t len)
{
    (void)why; (void)len;
    return DL_OK; /* a model runs anywhere */
}

/* The bootstrap id travels as for nccl, so the relay is exercised: the
 * root makes one, every rank logs the checksum of what it received. */
static dl_status_t exchange_id(sim_ctx_t *c, const dl_backend_cfg_t *cfg)
{
    const dl_xcomm_t *x = cfg->xc;
    unsigned char id[128] = {0};
    if (c->rank == 0) {
        uint64_t seed = (uint64_t)dl_now() * 1000003u ^ (uint64_t)getpid();
        for (size_t i = 0; i < sizeof(id); i++)
            id[i] = (unsigned char)(jitter(seed, i) * 127 + 128);
    }
    if (!x || !x->bcast)
        return DL_OK;
    dl_status_t st = x->bcast(x->arg, id, sizeof(id));
    if (st != DL_OK)
        return st;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < sizeof(id); i++)
        h = (h ^ id[i]) * 16777619u;
    c->id_sum = h;
    dl_info("rank %d: bootstrap id checksum %08x (%s)", c->rank, h,
            c->rank == 0 ? "made here" : "received from rank 0");
    return DL_OK;
}

/* --split on the model: process p carries the modelled ranks
 * [p M / P, (p + 1) M / P), so a modelled rank is in its process's group.
 * Only the NICs between nodes are shared by groups side by side (NVLink
 * and PCIe links are each GPU's own): a group spanning nodes gets its
 * node's NIC bandwidth divided by the spanning groups on that node. */
static dl_status_t model_groups(sim_ctx_t *c, const dl_split_t *sl, int world_rank)
{
    int M = c->model_ranks, P = sl->world, G = sl->groups, gpn = c->sys.gpus_per_node;
    int *grp = malloc((size_t)M * sizeof(int)), *span = calloc((size_t)G, sizeof(int));
    int *cnt = calloc((size_t)G * (size_t)c->nodes, sizeof(int));
    dl_status_t st = grp && span && cnt ? DL_OK : DL_ERR_NOMEM;
    for (int q = 0; st == DL_OK && q < M; q++) {
        grp[q] = dl_split_group(sl, (int)((long long)q * P / M));
        cnt[(size_t)grp[q] * (size_t)c->nodes + (size_t)(q / gpn)]++;
    }
    int mine = dl_split_group(sl, world_rank);
    for (int g = 0; st == DL_OK && g < G; g++) {
        int ranks = 0;
        for (int n = 0; n < c->nodes; n++) {
            ranks += cnt[(size_t)g * (size_t)c->nodes + (size_t)n];
            span[g] += cnt[(size_t)g * (size_t)c->nodes + (size_t)n] > 0;
        }
        if (ranks != M / G) {
            dl_err("sim: --split: the model's %d ranks over %d processes do not make %d equal "
                   "groups (run a number of processes that divides %d)", M, P, G, M);
            st = DL_ERR_USAGE;
        }
    }
    c->g_ranks = M / G;
    c->g_nodes = st == DL_OK ? span[mine] : 1;
    c->g_gpn = c->g_share = 1;
    for (int n = 0; st == DL_OK && n < c->nodes; n++) {
        int here = cnt[(size_t)mine * (size_t)c->nodes + (size_t)n], sharing = 0;
        if (!here)
            continue;
        c->g_gpn = here > c->g_gpn ? here : c->g_gpn;
        for (int g = 0; g < G; g++)
            sharing += span[g] > 1 && cnt[(size_t)g * (size_t)c->nodes + (size_t)n] > 0;
        c->g_share = sharing > c->g_share ? sharing : c->g_share;
    }
    free(grp);
    free(span);
    free(cnt);
    return st;
}

static dl_status_t sim_init(const dl_backend_cfg_t *cfg, void **out)
{
    sim_ctx_t *c = calloc(1, sizeof(*c));
    if (!c)
        return DL_ERR_NOMEM;
    const sim_opts_t *o = cfg->opts;
    dl_status_t st = load_system(o ? o->system : NULL, &c->sys);
    if (st != DL_OK) {
        free(c);
        return st;
    }
    c->rank = cfg->rank;
    c->nranks = cfg->nranks;
    c->nodes = o && o->nodes > 0 ? (int)o->nodes : c->sys.nodes;
    c->model_ranks = c->nodes * c->sys.gpus_per_node;
    c->g_ranks = c->model_ranks;
    c->g_nodes = c->nodes;
    c->g_gpn = c->sys.gpus_per_node;
    c->g_share = 1;
    if (cfg->split && (st = model_groups(c, cfg->split, cfg->world_rank)) != DL_OK) {
        free(c);
        return st;
    }
    select_paths(c);
    emulate_debug_log(c);
    st = exchange_id(c, cfg);
    if (st != DL_OK) {
        free(c);
        return st;
    }
    *out = c;
    return DL_OK;
}

static dl_status_t sim_prepare(void *ctx, const dl_case_t *k)
{
    (void)ctx; (void)k;
    return DL_OK;
}

static dl_status_t sim_run(void *ctx, const dl_case_t *k, int iters, double *times, double *total)
{
    sim_ctx_t *c = ctx;
    double base = best_us(c, k) * 1e-6, sum = 0;
    for (int i = 0; i < iters; i++) {
        double t = base * (1 + c->sys.jitter * jitter((uint64_t)c->rank, c->calls++));
        if (times)
            times[i] = t;
        sum += t;
    }
    *total = sum;
    return DL_OK;
}

static dl_status_t sim_check(void *ctx, const dl_case_t *k, uint64_t *wrong)
{
    (void)ctx; (void)k;
    *wrong = 0; /* no data moves in a model: see "data_checked" */
    return DL_OK;
}

static void sim_fini(void *ctx) { free(ctx); }

static void sim_traits(void *ctx, dl_backend_traits_t *t)
{
    const sim_ctx_t *c = ctx;
    t->bus_ranks = c->g_ranks; /* the group's, with --split */
    t->nodes = c->nodes;
}

/* In the supervisor: the system's name becomes its file, checked. */
static dl_status_t sim_setup(void *opts, dl_backend_setup_t *out)
{
    sim_opts_t *o = opts;
    const char *name = o->system ? o->system : "h200-sxm-8";
    if (dl_data_find("DLCOMM_SYSTEMS", "systems", name, out->system, sizeof(out->system))) {
        dl_err("--system %s: no such file (names are looked up in topologies/systems)", name);
        return DL_ERR_INPUT;
    }
    int nodes = 0, gpn = 0;
    dl_status_t st = dl_sim_system_check(out->system, &nodes, &gpn);
    if (st != DL_OK)
        return st;
    o->system = out->system;
    long long nn = o->nodes > 0 ? o->nodes : nodes;
    if (nn * gpn > DL_SIM_MAX_RANKS) { /* the ranks are ints, and each has its figures */
        dl_err("--sim-nodes %lld: %lld modelled ranks (%d a node); the sim models at most %d", nn,
               nn * gpn, gpn, DL_SIM_MAX_RANKS);
        return DL_ERR_USAGE;
    }
    out->nodes = (int)nn;
    out->ranks = out->nodes * gpn;
    return DL_OK;
}

static void sim_describe(void *ctx, void *json)
{
    sim_ctx_t *c = ctx;
    cJSON *o = json;
    char buf[16];
    cJSON_AddStringToObject(o, "system", c->sys.name);
    cJSON_AddNumberToObject(o, "modelled_ranks", c->model_ranks);
    cJSON_AddNumberToObject(o, "modelled_nodes", c->nodes);
    if (c->g_ranks != c->model_ranks) { /* --split: the group this process models */
        cJSON *g = cJSON_AddObjectToObject(o, "split_group");
        cJSON_AddNumberToObject(g, "modelled_ranks", c->g_ranks);
        cJSON_AddNumberToObject(g, "modelled_nodes", c->g_nodes);
        cJSON_AddNumberToObject(g, "ranks_per_node", c->g_gpn);
        cJSON_AddNumberToObject(g, "groups_sharing_nics", c->g_share);
    }
    cJSON_AddNumberToObject(o, "gpus_per_node", c->sys.gpus_per_node);
    cJSON_AddStringToObject(o, "intra_node_path", c->sys.gpus_per_node > 1 ? c->intra_name : "none");
    cJSON_AddStringToObject(o, "inter_node_path", c->nodes > 1 ? c->inter_name : "none");
    cJSON_AddNumberToObject(o, "path_bw_gbyte_s", c->nodes > 1 && c->inter.bw < c->intra.bw
                                                      ? c->inter.bw : c->intra.bw);
    cJSON *a = cJSON_AddArrayToObject(o, "algorithms");
    for (int i = 0; i < 2; i++)
        if (c->algos & (1u << i))
            cJSON_AddItemToArray(a, cJSON_CreateString(i ? "Tree" : "Ring"));
    a = cJSON_AddArrayToObject(o, "protocols");
    for (int i = 0; i < PR_COUNT; i++)
        if (c->protos & (1u << i))
            cJSON_AddItemToArray(a, cJSON_CreateString(proto_names[i]));
    snprintf(buf, sizeof(buf), "%08x", c->id_sum);
    cJSON_AddStringToObject(o, "bootstrap_id_checksum", buf);
    cJSON_AddBoolToObject(o, "data_checked", 0);
}

#define O(f) offsetof(sim_opts_t, f)
static const dl_opt_t sim_opts[] = {
    {"system", 0, DL_OPT_STR, NULL, "FILE", "sim: system description, name or path (default h200-sxm-8)",
     O(system), NULL},
    {"sim-nodes", 0, DL_OPT_INT, "0", "N", "sim: nodes to model (0: the system file's)", O(nodes),
     dl_opt_nonneg_long},
};
#undef O

const dl_backend_ops_t dl_backend_sim = {
    .name = "sim",
    .abi = DL_BACKEND_ABI,
    .caps = DL_CAP_WORKER | DL_CAP_MODELLED | DL_CAP_SYSTEM | DL_CAP_SPLIT,
    .opts = sim_opts,
    .nopts = DL_ARRAY_SIZE(sim_opts),
    .opts_size = sizeof(sim_opts_t),
    .setup = sim_setup,
    .probe = sim_probe,
    .init = sim_init,
    .prepare = sim_prepare,
    .run = sim_run,
    .check = sim_check,
    .fini = sim_fini,
    .describe = sim_describe,
    .traits = sim_traits,
};
