/* The sim backend: an analytic (alpha-beta) model of a system description
 * (a file in topologies/systems, read by sys/system.c), for planning at
 * scales no one has here and for running the whole pipeline on machines
 * without GPUs. It runs in a worker like nccl and reads the same NCCL_*
 * variables the profile set (ncclenv.c); the model is model.c's. Every call
 * gets a small deterministic jitter (the system's "jitter", as a fraction),
 * so statistics behave as for a measurement and runs repeat exactly. No
 * data moves: results are not checked (backend_info says so). Outside a
 * run, expect answers for one call (preflight's reference). */
#include "sim.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A deterministic value in [-1, 1] per (rank, call). */
static double jitter(uint64_t rank, uint64_t call)
{
    uint64_t x = (rank + 1) * 0x9E3779B97F4A7C15ull ^ (call + 1) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    return (double)(x >> 11) / (double)(1ull << 52) - 1.0;
}

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

static dl_status_t sim_init(const dl_backend_cfg_t *cfg, void **out)
{
    sim_ctx_t *c = calloc(1, sizeof(*c));
    if (!c)
        return DL_ERR_NOMEM;
    const sim_opts_t *o = cfg->opts;
    dl_status_t st = o && o->system ? dl_system_read(o->system, &c->sys) : DL_ERR_INPUT;
    if (!o || !o->system)
        dl_err("sim: no system description (the supervisor's setup names one)");
    c->rank = cfg->rank;
    c->nranks = cfg->nranks;
    c->teardown_s = o ? o->teardown_s : 0;
    if (st == DL_OK)
        sim_model_init(c, o->nodes > 0 ? (int)o->nodes : 0);
    if (st == DL_OK && cfg->split)
        st = sim_model_groups(c, cfg->split, cfg->world_rank);
    if (st == DL_OK) {
        sim_env_select(c);
        sim_debug_log(c);
        st = exchange_id(c, cfg);
    }
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
    double base = sim_best_us(c, k) * 1e-6, sum = 0;
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
    sim_ctx_t *c = ctx;
    int tree = 0, proto = 0;
    sim_pick(c, k, &tree, &proto);
    /* The model decides the algorithm and protocol, not the channels: 0. */
    c->chose = (dl_choice_t){.nchannels = 0};
    snprintf(c->chose.algo, sizeof(c->chose.algo), "%s", tree ? "Tree" : "Ring");
    snprintf(c->chose.proto, sizeof(c->chose.proto), "%s", sim_proto_names[proto]);
    snprintf(c->chose.from, sizeof(c->chose.from), "model");
    *wrong = 0; /* no data moves in a model: see "data_checked" */
    return DL_OK;
}

/* The model's choice for the checked call: what sim_run times, labelled
 * "model" (NCCL's rules on the described system, not an observation). */
static void sim_chose(void *ctx, dl_choice_t *out)
{
    const sim_ctx_t *c = ctx;
    *out = c->chose;
}

static void sim_fini(void *ctx)
{
    sim_ctx_t *c = ctx;
    if (c && c->teardown_s > 0) {
        struct timespec ts = {(time_t)c->teardown_s,
                              (long)((c->teardown_s - (double)(time_t)c->teardown_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    free(ctx);
}

static int sim_supports(const dl_case_t *c, char *why, size_t len)
{
    if (sim_model_has(c->coll->id))
        return 1;
    snprintf(why, len, "the sim has no model of %s", c->coll->name);
    return 0;
}

static void sim_traits(void *ctx, dl_backend_traits_t *t)
{
    const sim_ctx_t *c = ctx;
    t->bus_ranks = c->g_ranks; /* the group's, with --split */
    t->nodes = c->nodes;
    t->colls_off = dl_nccl_algo_colls_off(getenv("NCCL_ALGO"), t->off_why, sizeof(t->off_why));
}

/* In the supervisor: the system's name becomes its file, checked. */
static dl_status_t sim_setup(void *opts, dl_backend_setup_t *out)
{
    sim_opts_t *o = opts;
    dl_system_t sys;
    dl_status_t st = dl_system_load("--system", o->system ? o->system : "h200-sxm-8", &sys);
    if (st != DL_OK)
        return st;
    snprintf(o->file, sizeof(o->file), "%s", sys.file);
    o->system = o->file;
    long long nn = o->nodes > 0 ? o->nodes : sys.nodes;
    if (nn * sys.gpus_per_node > DL_SYSTEM_MAX_RANKS) { /* ints, and each has its figures */
        dl_err("--sim-nodes %lld: %lld modelled ranks (%d a node); the sim models at most %d", nn,
               nn * sys.gpus_per_node, sys.gpus_per_node, DL_SYSTEM_MAX_RANKS);
        return DL_ERR_USAGE;
    }
    out->nodes = (int)nn;
    out->ranks = out->nodes * sys.gpus_per_node;
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "system", sys.file);
    char *text = cJSON_PrintUnformatted(f);
    if (text && strlen(text) < sizeof(out->facts))
        memcpy(out->facts, text, strlen(text) + 1);
    cJSON_free(text);
    cJSON_Delete(f);
    return DL_OK;
}

/* One call outside a run: the model of nodes nodes under this process's
 * environment, no worker, no debug log (that file is the user's runs'). */
static dl_status_t sim_expect(const void *opts, dl_coll_id_t coll, uint64_t bytes, int nodes,
                              dl_expect_t *out)
{
    const sim_opts_t *o = opts;
    sim_ctx_t *c = calloc(1, sizeof(*c));
    dl_status_t st = c ? dl_system_read(o->system, &c->sys) : DL_ERR_NOMEM;
    if (st == DL_OK && !sim_model_has(coll))
        st = DL_ERR_UNAVAILABLE;
    if (st == DL_OK) {
        sim_model_init(c, nodes);
        sim_env_select(c);
        dl_case_t k = {.coll = dl_colls[coll], .dtype = DL_DT_FLOAT32, .op = DL_OP_SUM,
                       .place = DL_PLACE_OUT, .bytes_requested = bytes};
        k.coll->counts(bytes, dl_dtype_size(DL_DT_FLOAT32), c->model_ranks, 0, &k.counts);
        out->ranks = c->model_ranks;
        out->bytes = k.counts.bytes;
        out->time_s = sim_best_us(c, &k) * 1e-6;
    }
    free(c);
    return st;
}

static void describe_split(const sim_ctx_t *c, cJSON *o)
{
    if (c->g_ranks == c->model_ranks) /* no --split */
        return;
    cJSON *g = cJSON_AddObjectToObject(o, "split_group");
    cJSON_AddNumberToObject(g, "modelled_ranks", c->g_ranks);
    cJSON_AddNumberToObject(g, "modelled_nodes", c->g_nodes);
    cJSON_AddNumberToObject(g, "ranks_per_node", c->g_gpn);
    cJSON_AddNumberToObject(g, "groups_sharing_nics", c->g_share);
}

static void sim_describe(void *ctx, void *json)
{
    sim_ctx_t *c = ctx;
    cJSON *o = json;
    char buf[16];
    cJSON_AddStringToObject(o, "system", c->sys.name);
    cJSON_AddNumberToObject(o, "modelled_ranks", c->model_ranks);
    cJSON_AddNumberToObject(o, "modelled_nodes", c->nodes);
    describe_split(c, o);
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
    for (int i = 0; i < SIM_NPROTOS; i++)
        if (c->protos & (1u << i))
            cJSON_AddItemToArray(a, cJSON_CreateString(sim_proto_names[i]));
    snprintf(buf, sizeof(buf), "%08x", c->id_sum);
    cJSON_AddStringToObject(o, "bootstrap_id_checksum", buf);
    cJSON_AddBoolToObject(o, "data_checked", 0);
}

static const char *nonneg_double(const void *f)
{
    double v = *(const double *)f;
    return v >= 0 && v <= 60 ? NULL : "must be between 0 and 60";
}

#define O(f) offsetof(sim_opts_t, f)
static const dl_opt_t sim_opts[] = {
    {"system", 0, DL_OPT_STR, NULL, "NAME|FILE",
     "sim: system description, a name (dlcomm __complete systems) or a path (default h200-sxm-8)",
     O(system), NULL},
    {"sim-nodes", 0, DL_OPT_INT, "0", "N", "sim: nodes to model (0: the system file's)", O(nodes),
     dl_opt_nonneg_long},
    {"sim-teardown", 0, DL_OPT_DOUBLE, "0", "SEC",
     "sim: how long the communicator's full teardown takes (NCCL's destroy: up to 0.5 s); "
     "a worker at its end skips it, as with NCCL",
     O(teardown_s), nonneg_double},
};
#undef O

const dl_backend_ops_t dl_backend_sim = {
    .name = "sim",
    .caps = DL_CAP_WORKER | DL_CAP_MODELLED | DL_CAP_SPLIT,
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
    .supports = sim_supports,
    .describe = sim_describe,
    .traits = sim_traits,
    .expect = sim_expect,
    .chose = sim_chose,
};
