/* preflight --fleet N: the planner against a modelled fleet, reported as a
 * preflight is (check lines, the verdict), with the rounds it took and the
 * wall time they would take on real nodes of the system described. */
#include "fleet.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static dl_status_t fake_layout(int n, dl_pf_layout_t *l)
{
    memset(l, 0, sizeof(*l));
    l->nranks = l->nhosts = n;
    l->max_local = 1;
    l->host_of = malloc((size_t)n * sizeof(int));
    l->local_of = calloc((size_t)n, sizeof(int));
    l->names = malloc((size_t)n * sizeof(*l->names));
    if (!l->host_of || !l->local_of || !l->names)
        return DL_ERR_NOMEM;
    for (int h = 0; h < n; h++) {
        l->host_of[h] = h;
        snprintf(l->names[h], sizeof(l->names[h]), "node%d", h);
    }
    return DL_OK;
}

static void fleet_json(cJSON *fj, const pf_plan_t *p, const pf_fleet_t *m, double cpu_s)
{
    cJSON_AddNumberToObject(fj, "rounds", p->rounds);
    cJSON_AddNumberToObject(fj, "probes", p->probes);
    cJSON_AddNumberToObject(fj, "projected_s", p->wall_s);
    cJSON_AddNumberToObject(fj, "cpu_s", cpu_s);
    cJSON *fl = cJSON_AddArrayToObject(fj, "faults");
    for (int i = 0; i < m->nfaults; i++) {
        const pf_fault_t *f = &m->faults[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", pf_fault_kind_str(f->kind));
        cJSON_AddNumberToObject(o, "a", f->a);
        if (f->b >= 0)
            cJSON_AddNumberToObject(o, "b", f->b);
        cJSON_AddNumberToObject(o, "factor", f->factor);
        if (f->kind == PF_FAULT_FLAP)
            cJSON_AddNumberToObject(o, "share", f->p);
        cJSON_AddItemToArray(fl, o);
    }
    pf_plan_round_log_json(p, fj);
}

static void print_rounds(const pf_plan_t *p)
{
    for (int i = 0; i < p->rounds; i++) {
        char size[32];
        dl_size_format(p->log[i].bytes, size, sizeof(size));
        printf("round %2d %-13s %6d probes %8s  up to %3d iterations  %7.2f s\n", i + 1,
               p->log[i].stage, p->log[i].probes, size, p->log[i].max_iters, p->log[i].wall_s);
    }
}

static void report(pf_ctx_t *c, const pf_plan_t *p, const pf_fleet_t *m, const char *sys,
                   double cpu_s, cJSON *fj)
{
    print_rounds(p);
    int left = 0; /* hosts named or warned about: not cleared */
    cJSON *list = cJSON_AddArrayToObject(fj, "findings");
    for (int i = 0; i < p->nfinds; i++)
        left += p->finds[i].kind == PF_FIND_HOST;
    pf_check(c, left < p->n ? DL_PF_PASS : DL_PF_SKIP, "bandwidth", "fleet", "-", NULL,
             "%d of %d nodes cleared: screened in groups of %d on %d rail%s, %d rounds, %d probes",
             p->n - left, p->n, p->cfg.group, m->pr.nrails, m->pr.nrails > 1 ? "s" : "",
             p->rounds, p->probes);
    for (int i = 0; i < p->nfinds; i++)
        pf_plan_report_finding(c, &p->finds[i], NULL, list);
    fleet_json(fj, p, m, cpu_s);
    printf("fleet: %d nodes x %d rails (%s), %d rounds, %d probes, projected %.1f s on the fleet, "
           "simulated in %.2f s CPU\n", p->n, m->pr.nrails, sys, p->rounds, p->probes, p->wall_s,
           cpu_s);
}

static pf_plan_cfg_t plan_cfg(const dl_pf_opts_t *o, const dl_pf_fleet_opts_t *f, int n)
{
    int g = f->group < n ? f->group : n;
    return (pf_plan_cfg_t){.group = g, .target = f->target, .bytes = o->scope_bytes,
                           .orderings = 2, .all_pairs = 0, .controls = 3,
                           .judge = {.z = 4.5, .nmin = 16, .nmax = 400}};
}

dl_status_t dl_pf_fleet_run(const dl_pf_opts_t *o, const dl_pf_fleet_opts_t *f, cJSON *doc)
{
    int nr = o->system->gpus_per_node > 0 ? o->system->gpus_per_node : 1;
    pf_fleet_t m;
    dl_status_t st = pf_fleet_open(&m, o->model.be, o->model.opts, f->nodes, nr, f->noise,
                                   (uint64_t)f->seed);
    if (st == DL_OK)
        st = pf_faults_parse(f->faults, f->nodes, nr, m.faults, &m.nfaults);
    pf_ctx_t c = {.o = o, .rank = 0, .nranks = f->nodes};
    if (st == DL_OK)
        st = fake_layout(f->nodes, &c.lay);
    pf_plan_t p = {0};
    if (st == DL_OK) {
        clock_t t0 = clock();
        pf_plan_cfg_t cfg = plan_cfg(o, f, f->nodes);
        st = pf_plan_run(&m.pr, &cfg, &p);
        double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
        pf_ctx_doc_open(&c, doc);
        cJSON *fj = cJSON_AddObjectToObject(doc, "fleet");
        cJSON_AddNumberToObject(fj, "nodes", f->nodes);
        cJSON_AddNumberToObject(fj, "rails", nr);
        cJSON_AddStringToObject(fj, "system", o->system->name);
        cJSON_AddNumberToObject(fj, "noise", f->noise);
        cJSON_AddNumberToObject(fj, "seed", (double)f->seed);
        if (st == DL_OK)
            report(&c, &p, &m, o->system->name, cpu, fj);
        if (st == DL_OK)
            st = pf_verdict(&c);
        pf_ctx_doc_close(&c);
    }
    pf_plan_free(&p);
    dl_pf_layout_free(&c.lay);
    pf_fleet_close(&m);
    return st;
}
