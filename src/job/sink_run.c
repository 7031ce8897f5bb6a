/* The run record as a sink: rank 0 prints the header and a table per
 * collective, and keeps run.json and run.csv whole at every step (a
 * finished collective or profile is never lost). */
#include "job.h"

#include <stdlib.h>
#include <string.h>

#include "../analysis/analysis.h"
#include "../results/results.h"
#include "../sys/launch.h"
#include "../sys/lastwords.h"
#include "../sys/sys.h"

struct dl_run_sink {
    dl_run_sink_cfg_t cfg;
    cJSON *run, *profile;
    const char *profile_name;
    char label[128];
    const dl_coll_t *cur;
    size_t done;
    dl_status_t io;
    dl_rank_tally_t late; /* the rows' stragglers */
    dl_ncclt_t *nt;       /* --format nccl-tests: its layout instead of the table */
    const dl_job_t *j;
};

/* A "stragglers" list in run.json (the footer prints it): each rank named
 * by the rule of dl_rank_tally_t, with its host and why. */
static void report_stragglers(const dl_run_sink_t *s, const dl_job_t *j)
{
    if (!s->late.late_rows)
        return;
    cJSON *a = cJSON_AddArrayToObject(s->run, "stragglers");
    for (int i = 0; i < j->nranks; i++) {
        dl_rank_why_t w;
        if (!dl_rank_tally_named(&s->late, i, &w))
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", i);
        cJSON_AddStringToObject(e, "host", j->hosts ? j->hosts + (size_t)i * DL_RANK_NAME_LEN : "");
        cJSON_AddNumberToObject(e, "rows", w.late_rows);
        cJSON_AddNumberToObject(e, "of_rows", w.rows);
        cJSON_AddNumberToObject(e, "late_us", w.late_s * 1e6);
        if (w.slow_rows) {
            cJSON_AddNumberToObject(e, "slow_rows", w.slow_rows);
            cJSON_AddNumberToObject(e, "slow_ratio", w.slow_ratio);
        }
        cJSON_AddItemToArray(a, e);
    }
}

static dl_status_t on_result(void *arg, dl_result_t *r)
{
    dl_run_sink_t *s = arg;
    s->done++;
    if (!s->run)
        return DL_OK;
    if (s->cur != r->c.coll) {
        if (s->cur && s->io == DL_OK) /* a finished collective is never lost */
            s->io = dl_record_write(s->run, s->j->dir);
        s->cur = r->c.coll;
        dl_progress_end();
        if (!s->cfg.quiet && !s->nt)
            dl_table_header(stdout, s->cur, s->profile_name, r->bus_ranks, &r->split);
    }
    dl_record_add_row(s->profile, r);
    dl_rank_tally_add(&s->late, r);
    dl_progress_end();
    if (!s->cfg.quiet && s->nt)
        dl_ncclt_row(s->nt, r, s->profile_name);
    else if (!s->cfg.quiet)
        dl_table_row(stdout, r);
    char what[128], sz[32];
    dl_size_format(r->c.counts.bytes, sz, sizeof(sz));
    snprintf(what, sizeof(what), "%s %s %s", r->c.coll->name, dl_dtype_names[r->c.dtype], sz);
    dl_progress(s->done, s->j->total, what);
    return DL_OK;
}

/* The groups of a --split run, each with its world ranks (a row's group
 * indexes them). */
static void split_json(cJSON *run, const dl_split_t *sl)
{
    char name[48];
    dl_split_name(sl, name, sizeof(name));
    cJSON *o = cJSON_AddObjectToObject(run, "split");
    cJSON_AddStringToObject(o, "spec", name);
    cJSON_AddNumberToObject(o, "ranks_per_group", sl->size);
    cJSON *a = cJSON_AddArrayToObject(o, "groups");
    int *ranks = malloc((size_t)sl->world * sizeof(int));
    for (int g = 0; ranks && g < sl->groups; g++)
        cJSON_AddItemToArray(a, cJSON_CreateIntArray(ranks, dl_split_members(sl, g, ranks)));
    free(ranks);
}

static cJSON *run_header(dl_job_t *j)
{
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "%s", j->cfg.command);
    size_t n = strlen(cmd);
    for (int i = 0; i < j->cfg.argc && n < sizeof(cmd) - 2; i++)
        n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " %s", j->cfg.argv[i]);
    cJSON *run = dl_record_new(cmd);
    cJSON *opts = cJSON_AddObjectToObject(run, "options");
    dl_opts_echo(j->cfg.set->opts, j->cfg.set->n, j->cfg.set->target, opts);
    cJSON_AddItemToObject(run, "fingerprint", j->fingerprint);
    j->fingerprint = NULL; /* the record's now */
    cJSON_AddItemToObject(run, "environment", dl_env_allowlist());
    return run;
}

static dl_status_t on_begin(void *arg, dl_job_t *j)
{
    dl_run_sink_t *s = arg;
    s->j = j;
    s->run = run_header(j);
    const dl_split_t *sl = &j->cfg.plan->mo.split;
    if (sl->op != DL_SPLIT_NONE)
        split_json(s->run, sl);
    if (j->workers) /* what the backend resolved (the sim: its system file) */
        dl_backend_facts_add(&j->setup, s->run);
    dl_record_backend(s->run, j->be->name, j->chose, j->workers ? &j->setup : NULL);
    if (s->cfg.header)
        s->cfg.header(s->cfg.header_arg, s->run);
    dl_banner_header(stdout, s->run, !s->cfg.quiet && !s->cfg.ncclt);
    if (s->cfg.ncclt)
        s->nt = dl_ncclt_new(stdout, s->run);
    return dl_rank_tally_init(&s->late, j->nranks, NULL, j->hosts);
}

static cJSON *profile_json(cJSON *run, const dl_profile_t *p, const dl_backend_ops_t *be)
{
    cJSON *pj = dl_record_add_profile(run, p->name, be->name, dl_backend_has(be, DL_CAP_MODELLED));
    cJSON_AddStringToObject(pj, "description", p->description);
    cJSON_AddStringToObject(pj, "file", p->path);
    cJSON *env = cJSON_AddObjectToObject(pj, "env");
    for (int i = 0; i < p->nenv; i++) {
        char k[256];
        const char *eq = strchr(p->env[i], '=');
        snprintf(k, sizeof(k), "%.*s", (int)(eq - p->env[i]), p->env[i]);
        if (!dl_env_credential_like(k)) /* the environment's rule, in a file too */
            cJSON_AddStringToObject(env, k, eq + 1);
    }
    cJSON_AddItemToObject(pj, "intent", cJSON_Duplicate(p->intent, 1));
    return pj;
}

static cJSON *on_profile(void *arg, const dl_job_t *j, const dl_profile_t *p, const char *label,
                         const char *skip)
{
    dl_run_sink_t *s = arg;
    cJSON *pj = p ? profile_json(s->run, p, j->be)
                  : dl_record_add_profile(s->run, j->be->name, j->be->name, j->modelled);
    if (skip) {
        dl_record_set_status(pj, DL_REC_SKIPPED, skip);
        if (s->io == DL_OK)
            s->io = dl_record_write(s->run, j->dir);
        return pj;
    }
    s->profile = pj;
    snprintf(s->label, sizeof(s->label), "%s", label);
    s->profile_name = s->label;
    s->cur = NULL;
    return pj;
}

static void on_profile_end(void *arg, const dl_job_t *j, dl_rec_status_t status,
                           const char *reason)
{
    dl_run_sink_t *s = arg;
    if (status != DL_REC_UNKNOWN)
        dl_record_set_status(s->profile, status, reason);
    if (j->workers && s->io == DL_OK) /* a finished profile is never lost */
        s->io = dl_record_write(s->run, j->dir);
}

static void on_interrupted(void *arg, const dl_job_t *j, int sig)
{
    dl_run_sink_t *s = arg;
    char why[160];
    snprintf(why, sizeof(why), "interrupted by %s after %zu of %zu cases", dl_lw_signame(sig),
             s->done, j->total);
    dl_record_set_status(s->profile, DL_REC_INTERRUPTED, why);
    dl_lw_record(s->profile, j->hosts, j->nranks); /* a peer killed first is the cause */
    cJSON_AddStringToObject(s->run, "interrupted_by", dl_lw_signame(sig));
    dl_record_set_exit(s->run, 3);
    dl_progress_end();
    if (s->io == DL_OK && dl_record_write(s->run, j->dir) == DL_OK)
        dl_err("%s: %s/run.json keeps the %zu finished rows", why, j->dir, s->done);
    else
        dl_err("%s; %s/run.json could not be written", why, j->dir);
}

/* The record's last writes: how the run ended, then (unless it stopped
 * early) the charts and files made from what was written. */
static dl_status_t on_end(void *arg, dl_job_t *j, dl_status_t st)
{
    dl_run_sink_t *s = arg;
    const char *dir = j->dir;
    if (j->stop) { /* who was killed, or which signal stopped the job */
        dl_lw_record(s->profile, j->hosts, j->nranks);
        if (j->sig)
            cJSON_AddStringToObject(s->run, "interrupted_by", dl_lw_signame(j->sig));
    }
    report_stragglers(s, j);
    dl_record_set_exit(s->run, dl_status_exit_code(st));
    dl_status_t io = dl_record_write(s->run, dir);
    int written = io == DL_OK; /* else run.json is the last whole version */
    if (io == DL_OK) /* the record's code is the run's, whatever ends this process */
        dl_launch_note(dl_status_exit_code(st));
    if (io == DL_OK && j->stop) /* mpirun's SIGKILL may follow within a second: no charts */
        dl_err("%s%s: %s/run.json keeps the %zu finished rows", j->sig ? "interrupted by " : "stopped",
               j->sig ? dl_lw_signame(j->sig) : "", dir, s->done);
    else if (io == DL_OK) /* charts and the Prometheus file come from what was written */
        io = dl_an_after_sweep(dir, s->cfg.plot, s->cfg.prometheus, s->cfg.html);
    dl_ncclt_free(s->nt); /* its last block's closing lines */
    s->nt = NULL;
    dl_banner_footer(stdout, s->run, dir, written);
    if (j->wrong)
        dl_err("%llu wrong elements (see wrong_per_rank in %s/run.json)",
               (unsigned long long)j->wrong, dir);
    if (io != DL_OK) {
        st = dl_status_worse(st, io);
        /* The record says how the run ended, charts included. */
        dl_record_set_exit(s->run, dl_status_exit_code(st));
        if (written && dl_record_write(s->run, dir) == DL_OK)
            dl_launch_note(dl_status_exit_code(st));
    }
    return st;
}

dl_status_t dl_run_sink_new(const dl_run_sink_cfg_t *cfg, dl_run_sink_t **out, dl_sink_t *sink)
{
    dl_run_sink_t *s = calloc(1, sizeof(*s));
    *out = s;
    if (!s)
        return DL_ERR_NOMEM;
    s->cfg = *cfg;
    *sink = (dl_sink_t){.arg = s, .begin = on_begin, .profile = on_profile, .result = on_result,
                        .profile_end = on_profile_end, .interrupted = on_interrupted,
                        .end = on_end};
    return DL_OK;
}

cJSON *dl_run_sink_record(dl_run_sink_t *rs)
{
    return rs ? rs->run : NULL;
}

void dl_run_sink_free(dl_run_sink_t *rs)
{
    if (!rs)
        return;
    dl_ncclt_free(rs->nt);
    cJSON_Delete(rs->run);
    dl_rank_tally_free(&rs->late);
    free(rs);
}
