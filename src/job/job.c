/* Opening and closing a job: every check before anything is written, then
 * the output folder, the fingerprint and the last-words record. */
#include "job.h"

#include <stdlib.h>
#include <string.h>

#include "../results/results.h"
#include "../sys/gpus.h"
#include "../sys/launch.h"
#include "../sys/lastwords.h"
#include "../sys/mpistart.h"
#include "../sys/sys.h"

const char *dl_job_pos_long(const void *f)
{
    return *(const long *)f > 0 ? NULL : "must be > 0";
}

const char *dl_job_fraction(const void *f)
{
    double v = *(const double *)f;
    return v >= 0 && v < 1 ? NULL
                           : "must be at least 0 and below 1 (e.g. 0.01 for 1%; 0: no CI stop)";
}

dl_status_t dl_job_mpi_start(const dl_job_opts_t *o, int *argc, char ***argv)
{
    char chose[512];
    const dl_backend_ops_t *be = dl_backend_choose(o->backend, 0, chose, sizeof(chose));
    return dl_mpi_start(argc, argv, be && dl_backend_has(be, DL_CAP_WORKER));
}

dl_status_t dl_job_timing(const dl_job_opts_t *o, dl_measure_opts_t *mo)
{
    if (o->min_iters > o->max_iters) {
        dl_err("--min-iters (%ld) is larger than --max-iters (%ld)", o->min_iters, o->max_iters);
        return DL_ERR_USAGE;
    }
    mo->warmup = (int)o->warmup;
    mo->iters = (int)o->iters;
    mo->ci_target = o->ci_target;
    mo->budget_s = o->budget;
    mo->min_iters = (int)o->min_iters;
    mo->max_iters = (int)o->max_iters;
    mo->check = o->check;
    return DL_OK;
}

dl_status_t dl_job_foreign_opts(const dl_optset_t *set, const dl_backend_ops_t *be,
                                const char *what)
{
    for (size_t k = 0; k < dl_backend_count; k++) {
        const dl_backend_ops_t *b = dl_backends[k];
        if (b == be || !b->opts_size)
            continue;
        const dl_opt_t *given = dl_opts_first_given(b->opts, b->nopts,
                                                    dl_backend_optset_opts(set, b));
        if (given) {
            if (what)
                dl_err("--%s is an option of the %s backend; this %s runs on %s",
                       given->longname, b->name, what, be->name);
            return DL_ERR_USAGE;
        }
    }
    return DL_OK;
}

/* A case whose element count the backend's calls cannot take is refused
 * before anything runs (exit 2), never measured as something else. */
static dl_status_t count_limit(const dl_plan_t *p, const dl_backend_ops_t *be, int nranks)
{
    if (p->kind != DL_PLAN_SWEEP || !p->sweep.nsizes)
        return DL_OK;
    for (int c = 0; be->max_count && c < DL_COLL_COUNT; c++)
        for (int d = 0; (p->sweep.colls >> c & 1) && d < DL_DT_COUNT; d++) {
            if (!(p->sweep.dtypes >> d & 1))
                continue;
            dl_counts_t cnt;
            dl_colls[c]->counts(p->sweep.sizes[p->sweep.nsizes - 1], dl_dtype_size((dl_dtype_t)d),
                                nranks, 0, &cnt);
            if (cnt.param_count > be->max_count) {
                dl_err("%s of %zu %s elements: the %s backend's calls take at most %llu "
                       "elements (int counts); lower --maxbytes", dl_colls[c]->name,
                       cnt.param_count, dl_dtype_names[d], be->name,
                       (unsigned long long)be->max_count);
                return DL_ERR_USAGE;
            }
        }
    return DL_OK;
}

/* The plan against the job's ranks, before a backend is picked. */
static dl_status_t check_ranks(const dl_job_t *j)
{
    const dl_plan_t *p = j->cfg.plan;
    dl_split_t *sl = &j->cfg.plan->mo.split;
    dl_log_set_mute(j->rank != 0);
    dl_status_t st = dl_split_check(sl, j->nranks);
    dl_log_set_mute(j->rank != 0);
    if (st == DL_OK && p->root >= sl->size) {
        dl_err("--root %d: there are only %d ranks%s", p->root, sl->size,
               sl->op != DL_SPLIT_NONE ? " in each --split group" : "");
        st = DL_ERR_USAGE;
    }
    dl_log_set_mute(0);
    return st;
}

/* The plan against the backend's capabilities. */
static dl_status_t check_plan(const dl_job_t *j)
{
    const dl_plan_t *p = j->cfg.plan;
    if (!p) /* a command with a loop of its own: the injection alone */
        return dl_inject_validate(j->cfg.inject, j->be, j->nranks);
    const dl_split_t *sl = &p->mo.split;
    dl_status_t st = DL_OK;
    if (sl->op != DL_SPLIT_NONE && !dl_backend_has(j->be, DL_CAP_SPLIT)) {
        dl_err("--split: the %s backend cannot run on groups of the ranks", j->be->name);
        st = DL_ERR_USAGE;
    }
    if (st == DL_OK)
        st = count_limit(p, j->be, sl->size);
    if (st == DL_OK)
        st = dl_inject_validate(j->cfg.inject, j->be, j->nranks);
    return st;
}

/* A fault planted on a profile this run does not have would never fire:
 * an injection silently ignored is bad input (exit 2), as a bad rank is. */
static dl_status_t inject_profile_check(const dl_inject_t *inj, const dl_job_t *j)
{
    if (inj->kind == DL_INJECT_NONE || !inj->profile[0])
        return DL_OK;
    char names[512];
    size_t n = 0;
    names[0] = '\0';
    for (int i = 0; i < j->nprofiles; i++) {
        if (strcmp(j->profiles[i].name, inj->profile) == 0)
            return DL_OK;
        if (n < sizeof(names))
            n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "",
                                  j->profiles[i].name);
    }
    dl_err("DLCOMM_INJECT: profile '%s' is not one this run has (%s)", inj->profile, names);
    return DL_ERR_USAGE;
}

/* What a worker job needs beyond the options: the profiles and what the
 * backend's setup resolved (a model's system and size). */
static dl_status_t load_inputs(dl_job_t *j)
{
    const dl_job_opts_t *o = j->cfg.o;
    const char *cmd = j->cfg.command, *sp = strchr(cmd, ' ');
    dl_status_t st = dl_job_foreign_opts(j->cfg.set, j->be, sp ? sp + 1 : cmd);
    if (st != DL_OK)
        return st;
    if (!j->workers) {
        if (o->profiles)
            dl_err("-p needs a worker backend (--backend nccl or sim): MPI's own settings are "
                   "fixed at launch, so the %s backend runs one implicit profile", j->be->name);
        return o->profiles ? DL_ERR_USAGE : DL_OK;
    }
    st = dl_profiles_load(o->profiles ? o->profiles : "default", &j->profiles, &j->nprofiles);
    if (st == DL_OK && j->be->setup)
        st = j->be->setup(j->be_opts, &j->setup);
    const dl_split_t *sl = &j->cfg.plan->mo.split;
    if (st == DL_OK && j->setup.ranks > 0 && j->setup.ranks % sl->groups) {
        /* a model's groups are of its ranks, not of the processes */
        dl_err("--split: the model's %d ranks do not make %d equal groups", j->setup.ranks,
               sl->groups);
        st = DL_ERR_USAGE;
    }
    if (st == DL_OK)
        st = inject_profile_check(j->cfg.inject, j);
    return st;
}

/* The folder rank 0 writes into: --out (made when missing), or a new
 * default one; its workers/ checked before anything runs (exit 2). */
static dl_status_t make_outdir(const dl_job_opts_t *o, int workers, char *dir, size_t len)
{
    dl_host_info_t h;
    dl_status_t st = DL_OK;
    if (o->out && strlen(o->out) + 32 >= len) { /* room for its files: never cut */
        dl_err("--out: a folder name of %zu bytes; at most %zu", strlen(o->out), len - 33);
        return DL_ERR_USAGE;
    }
    if (o->out) {
        snprintf(dir, len, "%s", o->out);
        if (dl_mkdir_p(dir) != DL_OK)
            st = DL_ERR_IO;
    } else {
        dl_sys_host_info(&h);
        st = dl_out_dir_new(dir, len, h.host);
    }
    if (st == DL_OK && dl_dir_writable(dir) != DL_OK)
        st = DL_ERR_IO;
    if (st != DL_OK) {
        dl_err("--out %s: cannot create or write that folder", dir);
        return st;
    }
    st = dl_out_claim(dir, o->overwrite);
    if (st == DL_OK && workers) {
        char wd[4096 + 16];
        snprintf(wd, sizeof(wd), "%s/workers", dir);
        st = dl_dir_private(wd, NULL);
    }
    return st;
}

/* Rank 0 picks and creates the output folder; everyone learns the outcome. */
static dl_status_t prepare_outdir(const dl_job_opts_t *o, int workers, int rank, char *dir,
                                  size_t len)
{
    int st = rank == 0 ? (int)make_outdir(o, workers, dir, len) : DL_OK;
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(dir, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    return (dl_status_t)st;
}

/* Who this rank is, its place on its machine (the device it takes), and
 * how many hosts the job has as NCCL counts them (dl_sys_hosts). */
static dl_status_t where(dl_job_t *j)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &j->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j->nranks);
    j->local_rank = 0;
    j->local_size = 1;
    dl_sys_local_rank(MPI_COMM_WORLD, &j->local_rank, &j->local_size);
    dl_hosts_t h;
    dl_status_t st = dl_sys_hosts(MPI_COMM_WORLD, &h);
    j->nodes = st == DL_OK ? h.nhosts : 1;
    if (st == DL_OK)
        dl_sys_hosts_free(&h);
    return st;
}

int dl_job_pick(const dl_job_cfg_t *cfg, dl_job_t *j)
{
    memset(j, 0, sizeof(*j));
    j->cfg = *cfg;
    int shared = 0;
    dl_status_t env = dl_sys_shared_gpu_env(&shared); /* before anyone asks what a host is */
    int bad = env != DL_OK, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any)
        return 2;
    if (where(j) != DL_OK)
        return 3;
    if (cfg->plan && check_ranks(j) != DL_OK)
        return 2;
    j->be = dl_backend_choose(cfg->o->backend, j->rank == 0, j->chose, sizeof(j->chose));
    if (!j->be)
        return 2;
    j->workers = dl_backend_has(j->be, DL_CAP_WORKER);
    j->modelled = dl_backend_has(j->be, DL_CAP_MODELLED);
    j->be_opts = cfg->set ? dl_backend_optset_opts(cfg->set, j->be) : NULL;
    /* Every rank finds the same mistake; rank 0 says it. */
    dl_log_set_mute(j->rank != 0);
    dl_status_t st = check_plan(j);
    dl_log_set_mute(0);
    if (st != DL_OK)
        return dl_status_exit_code(st);
    if (dl_backend_has(j->be, DL_CAP_DEVICE) &&
        dl_gpus_check(MPI_COMM_WORLD, 0, "or --backend mpi", &j->per_gpu))
        return 2; /* more ranks than GPUs on a host: every rank agreed */
    if (j->per_gpu > 1 && j->rank == 0)
        dl_warn("%d ranks share each GPU, each its own NCCL host: the figures are NCCL's code "
                "paths over loopback sockets on one GPU, not fabric bandwidth", j->per_gpu);
    return 0;
}

void dl_job_fingerprint(dl_job_t *j)
{
    j->fingerprint = dl_sys_fingerprint(MPI_COMM_WORLD, &j->hosts);
    cJSON *gpus = dl_backend_has(j->be, DL_CAP_DEVICE) ? dl_gpus_rank_map(MPI_COMM_WORLD) : NULL;
    if (j->fingerprint && gpus) /* each rank's GPU, for the header and for compare */
        cJSON_AddItemToObject(j->fingerprint, "rank_gpus", gpus);
    else
        cJSON_Delete(gpus);
    if (j->fingerprint && j->per_gpu > 1) /* several NCCL hosts on one GPU */
        cJSON_AddNumberToObject(j->fingerprint, "shared_gpu", j->per_gpu);
}

/* The rows the run will record (j->total), and whether dlcomm's own
 * readers will take the record they make: a plan past DL_RECORD_MAX_BYTES
 * is refused before anything runs, not written and then refused. */
static dl_status_t count_rows(const dl_job_cfg_t *cfg, dl_job_t *j)
{
    const dl_split_t *sl = &cfg->plan->mo.split;
    int ranks = j->setup.ranks > 0 ? j->setup.ranks / sl->groups : sl->size;
    j->total = dl_plan_cases(cfg->plan, j->be, ranks) *
               (size_t)(j->workers ? j->nprofiles : 1) * (size_t)sl->groups;
    double bytes = (double)j->total * (DL_RECORD_ROW_BYTES + DL_RECORD_RANK_BYTES * j->nranks);
    if (bytes <= (double)DL_RECORD_MAX_BYTES)
        return DL_OK;
    dl_err("this plan records %zu rows on %d ranks, about %.0f MiB of run.json: more than the "
           "%llu MiB that report, compare and history read; sweep fewer sizes, collectives, "
           "dtypes or profiles (or split it into several runs)", j->total, j->nranks,
           bytes / (1 << 20), (unsigned long long)(DL_RECORD_MAX_BYTES >> 20));
    return DL_ERR_USAGE;
}

int dl_job_open(const dl_job_cfg_t *cfg, dl_job_t *j)
{
    int code = dl_job_pick(cfg, j);
    if (code != 0)
        return code;
    dl_log_set_mute(j->rank != 0);
    dl_status_t st = load_inputs(j);
    if (st == DL_OK)
        st = count_rows(cfg, j);
    dl_log_set_mute(0);
    if (st == DL_OK && prepare_outdir(cfg->o, j->workers, j->rank, j->dir, sizeof(j->dir)) != DL_OK)
        st = DL_ERR_USAGE;
    if (st != DL_OK) {
        dl_profiles_free(j->profiles, j->nprofiles);
        j->profiles = NULL;
        return dl_status_exit_code(st);
    }
    dl_job_fingerprint(j);
    dl_host_info_t me;
    dl_sys_host_info(&me);
    dl_lw_open(MPI_COMM_WORLD, j->dir, j->rank, j->nranks, me.host); /* how a rank ends */
    return 0;
}

/* How long a rank that is not rank 0 waits for rank 0's record when a peer is gone. */
#define DL_RECORD_WAIT_S 0.9

int dl_job_close(dl_job_t *j, dl_status_t st, const dl_sink_t *s)
{
    if (st == DL_OK && j->wrong)
        st = DL_ERR_CHECK;
    if (j->rank == 0 && s->end)
        st = s->end(s->arg, j, st);
    dl_profiles_free(j->profiles, j->nprofiles);
    j->profiles = NULL;
    cJSON_Delete(j->fingerprint);
    j->fingerprint = NULL;
    free(j->hosts);
    j->hosts = NULL;
    int code = dl_status_exit_code(st);
    if (j->stop == 2) { /* a peer is gone: MPI cannot finish cleanly */
        if (j->rank == 0)
            dl_lw_recorded();
        else
            dl_lw_wait_recorded(DL_RECORD_WAIT_S);
        fflush(NULL);
        dl_launch_note(code);
        MPI_Abort(MPI_COMM_WORLD, code);
    }
    return code;
}
