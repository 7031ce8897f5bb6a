/* The order of a preflight: host checks, correctness, world bandwidth, then
 * the scopes that localise; the verdict last. */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void pf_ctx_doc_open(pf_ctx_t *c, cJSON *doc)
{
    c->doc = doc;
    c->checks = cJSON_AddArrayToObject(doc, "checks");
    c->scopes = cJSON_AddObjectToObject(doc, "scopes");
    c->suspects = cJSON_AddArrayToObject(doc, "suspects");
    c->v_hosts = cJSON_CreateArray();
    c->v_gpus = cJSON_CreateArray();
    c->v_pairs = cJSON_CreateArray();
    c->v_rails = cJSON_CreateArray();
    c->v_ranks = cJSON_CreateArray();
}

void pf_ctx_doc_close(pf_ctx_t *c)
{
    cJSON_Delete(c->v_hosts);
    cJSON_Delete(c->v_gpus);
    cJSON_Delete(c->v_pairs);
    cJSON_Delete(c->v_rails);
    cJSON_Delete(c->v_ranks);
}

static void layout_json(pf_ctx_t *c)
{
    if (c->rank != 0)
        return;
    cJSON *w = cJSON_AddObjectToObject(c->scopes, "world");
    cJSON_AddNumberToObject(w, "ranks", c->nranks);
    cJSON_AddNumberToObject(w, "hosts", c->lay.nhosts);
    cJSON_AddNumberToObject(w, "max_ranks_per_host", c->lay.max_local);
    cJSON *hl = cJSON_AddArrayToObject(w, "host_ranks");
    for (int h = 0; h < c->lay.nhosts; h++) {
        cJSON *e = cJSON_CreateObject(), *rs = cJSON_AddArrayToObject(e, "ranks");
        cJSON_AddStringToObject(e, "host", c->lay.names[h]);
        for (int r = 0; r < c->nranks; r++)
            if (c->lay.host_of[r] == h)
                cJSON_AddItemToArray(rs, cJSON_CreateNumber(r));
        cJSON_AddItemToArray(hl, e);
    }
}

/* How long each stage took (what the time bound in docs/preflight.md
 * bounds): host checks, correctness, world bandwidth with the per-rank
 * judgement, the scopes; a stage not run is left out (< 0). */
static const char *const stage_names[] = {"host", "correctness", "bandwidth", "scopes"};

static void stages_json(pf_ctx_t *c, const double *stage)
{
    if (c->rank != 0)
        return;
    cJSON *s = cJSON_AddObjectToObject(c->doc, "stage_s");
    for (size_t i = 0; i < DL_ARRAY_SIZE(stage_names); i++)
        if (stage[i] >= 0)
            cJSON_AddNumberToObject(s, stage_names[i], stage[i]);
}

/* The checks after a worker's fault are not run: said once each. */
static void skip_rest(pf_ctx_t *c, const char *const *rest)
{
    for (; *rest; rest++)
        pf_check(c, DL_PF_SKIP, *rest, "-", "-", NULL, "not run: a rank's worker failed before");
}

dl_status_t dl_preflight_run(const dl_pf_opts_t *o, MPI_Comm world, cJSON *doc)
{
    pf_ctx_t c = {.o = o, .be = o->on_world.be, .be_opts = o->on_world.opts, .world = world};
    MPI_Comm_rank(world, &c.rank);
    MPI_Comm_size(world, &c.nranks);
    if (c.rank == 0)
        pf_ctx_doc_open(&c, doc);
    double t0 = dl_now();
    pf_watchdog_start(&c, c.rank == 0 ? o->json_path : NULL);
    dl_status_t st = dl_pf_layout_build(world, &c.lay);
    if (st == DL_OK) {
        layout_json(&c);
        st = pf_ranks_init(&c);
    }
    if (st == DL_OK)
        st = pf_host_checks(&c);
    /* What is left, were a rank's worker to fail in this stage. */
    static const char *const after_corr[] = {"correctness", "bandwidth", "scopes", NULL};
    static const char *const after_bw[] = {"scopes", NULL};
    static const char *const none[] = {NULL};
    const char *const *rest = after_corr;
    double stage[4] = {dl_now() - t0, -1, -1, -1}, t = dl_now();
    if (st == DL_OK) {
        st = pf_correctness(&c);
        stage[1] = dl_now() - t;
    }
    if (st == DL_OK) {
        rest = after_bw;
        t = dl_now();
        st = pf_bandwidth(&c);
        stage[2] = dl_now() - t;
    }
    if (st == DL_OK) { /* the scopes under their own profile (NCCL_ALGO=Ring by default) */
        rest = none;
        c.be = o->on_scopes.be;
        c.be_opts = o->on_scopes.opts;
        t = dl_now();
        st = pf_scopes(&c);
        stage[3] = dl_now() - t;
    }
    stages_json(&c, stage);
    if (c.faulted) { /* named as a FAIL; the verdict follows, the rest is not run */
        skip_rest(&c, rest);
        st = DL_OK;
    }
    if (!pf_watchdog_final()) /* a signal came first: the watchdog writes and aborts */
        for (;;)
            pause();
    if (c.rank == 0)
        cJSON_AddNumberToObject(doc, "elapsed_s", dl_now() - t0);
    if (c.rank == 0 && st == DL_OK) {
        st = pf_verdict(&c);
    } else if (c.rank == 0) { /* the checks so far stay; the verdict says it broke */
        cJSON *v = cJSON_AddObjectToObject(doc, "verdict");
        cJSON_AddStringToObject(v, "status", "broke");
        cJSON_AddStringToObject(v, "reason", dl_status_str(st));
        printf("VERDICT BROKE %s\n", dl_status_str(st));
    }
    /* Every rank returns the same outcome. */
    int code = st;
    MPI_Bcast(&code, 1, MPI_INT, 0, world);
    pf_ranks_free(&c);
    dl_pf_layout_free(&c.lay);
    if (c.rank == 0)
        pf_ctx_doc_close(&c);
    return st != DL_OK && st != DL_ERR_CHECK ? st : (dl_status_t)code;
}
