/* What a person sees (table, progress) and what the run may record of the
 * environment (an allow-list: the environment holds secrets). */
#include "results.h"

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Prefixes ending in '_' match a family; others match exactly. Anything that
 * looks like a credential is refused even inside an allowed family. */
static const char *const allowed[] = {
    "NCCL_", "UCX_", "OMPI_MCA_", "PMIX_MCA_", "HOROVOD_", "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "NVIDIA_VISIBLE_DEVICES", "OMP_NUM_THREADS",
    "SLURM_JOB_ID", "SLURM_JOB_NUM_NODES", "SLURM_NTASKS", "SLURM_JOB_PARTITION",
    "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "DLCOMM_INJECT",
};
/* The credential rule, case-insensitive (names are compared upper-cased):
 * a name is refused when it holds one of these words anywhere, or when one
 * of its '_'-separated words ends in KEY (API_KEY, ApiKey, SSHKEY) or is
 * URI/URL (connection strings carry passwords). NCCL's own settings that
 * the rule would catch are kept by exact name: NCCL_IB_PKEY is the
 * InfiniBand partition key, a number, not a secret. */
static const char *const refused[] = {"SECRET", "TOKEN",  "PASSW",   "PASSWD", "PWD",
                                      "CREDENTIAL", "AUTH", "PRIVATE", "COOKIE", "PRECONDITION"};
static const char *const refused_word[] = {"URI", "URL"};
static const char *const kept_exactly[] = {"NCCL_IB_PKEY"};

int dl_env_credential_like(const char *name)
{
    char up[256];
    size_t n = strlen(name);
    if (n >= sizeof(up))
        return 1; /* nothing that long is a setting we record */
    for (size_t i = 0; i <= n; i++)
        up[i] = (char)toupper((unsigned char)name[i]);
    for (size_t i = 0; i < DL_ARRAY_SIZE(kept_exactly); i++)
        if (strcmp(up, kept_exactly[i]) == 0)
            return 0;
    for (size_t i = 0; i < DL_ARRAY_SIZE(refused); i++)
        if (strstr(up, refused[i]))
            return 1;
    for (char *w = up; *w;) {
        size_t len = strcspn(w, "_");
        if (len >= 3 && strncmp(w + len - 3, "KEY", 3) == 0)
            return 1;
        for (size_t i = 0; i < DL_ARRAY_SIZE(refused_word); i++)
            if (len == strlen(refused_word[i]) && strncmp(w, refused_word[i], len) == 0)
                return 1;
        w += len;
        while (*w == '_')
            w++;
    }
    return 0;
}

/* The launcher's own plumbing (session keys, daemon addresses, paths). */
static const char *const launcher[] = {"OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix",
                                       "OMPI_MCA_initial_wdir", "OMPI_MCA_shmem_",
                                       "PMIX_MCA_psec"};

int dl_env_allowed(const char *name)
{
    if (dl_env_credential_like(name))
        return 0;
    for (size_t i = 0; i < DL_ARRAY_SIZE(launcher); i++)
        if (strncmp(name, launcher[i], strlen(launcher[i])) == 0)
            return 0;
    for (size_t i = 0; i < DL_ARRAY_SIZE(allowed); i++) {
        size_t n = strlen(allowed[i]);
        if (allowed[i][n - 1] == '_' ? strncmp(name, allowed[i], n) == 0
                                     : strcmp(name, allowed[i]) == 0)
            return 1;
    }
    return 0;
}

cJSON *dl_env_allowlist(void)
{
    cJSON *o = cJSON_CreateObject();
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        char name[256];
        if (!eq || (size_t)(eq - *e) >= sizeof(name))
            continue;
        memcpy(name, *e, (size_t)(eq - *e));
        name[eq - *e] = '\0';
        if (dl_env_allowed(name))
            cJSON_AddStringToObject(o, name, eq + 1);
    }
    return o;
}

dl_status_t dl_out_dir_new(char *buf, size_t len, const char *host)
{
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%d-%H%M%S", &tm);
    if (dl_mkdir_p("results") != DL_OK) {
        dl_err("cannot create the folder results: %s", strerror(errno));
        return DL_ERR_IO;
    }
    /* mkdir is the claim: runs started in the same second (no --out) each
     * get a folder of their own, -2, -3 after the first. */
    for (int k = 1; k < 1000; k++) {
        if (k == 1)
            snprintf(buf, len, "results/%s-%s", ts, host);
        else
            snprintf(buf, len, "results/%s-%s-%d", ts, host, k);
        if (mkdir(buf, 0755) == 0)
            return DL_OK;
        if (errno != EEXIST)
            break;
    }
    dl_err("cannot create a results folder %s: %s", buf, strerror(errno));
    return DL_ERR_IO;
}

void dl_table_header(FILE *f, const dl_coll_t *c, const char *profile, int nranks,
                     const dl_split_t *split)
{
    int g = split && split->op != DL_SPLIT_NONE;
    char name[48] = "";
    if (g)
        dl_split_name(split, name, sizeof(name));
    fprintf(f, "#\n# %s  profile %s  ranks %d%s%s%s\n", c->name, profile, nranks,
            g ? " in each group  groups " : "", name, g ? " (side by side)" : "");
    /* time: the batches' mean (busbw's time); p50, p99: calls timed one by one. */
    fprintf(f, "#%12s %12s %9s %6s %5s %5s %10s %10s %10s %9s %9s %7s %7s %15s %-*s%s\n",
            "size", "count", "type", "redop", "root", "place", "time", "p50", "p99", "algbw",
            "busbw", "#wrong", "iters", "chose", g ? 9 : 0, "stop", g ? "  group" : "");
    fprintf(f, "#%12s %12s %9s %6s %5s %5s %10s %10s %10s %9s %9s %7s %7s %15s\n", "(B)",
            "(elements)", "", "", "", "", "(us,batch)", "(us,call)", "(us,call)", "(GB/s)", "(GB/s)",
            "", "", "(algo/proto/ch)");
    fflush(f);
}

void dl_table_row(FILE *f, const dl_result_t *r)
{
    const dl_case_t *c = &r->c;
    char group[16] = "", wrong[24] = "-", root[16] = "-"; /* "-": none, as nccl-tests */
    char chose[48];
    dl_rec_choice_text(r->choice.algo, r->choice.proto, r->choice.nchannels, r->choice_mixed,
                       chose, sizeof(chose));
    if (r->split.op != DL_SPLIT_NONE)
        snprintf(group, sizeof(group), "  %5d", r->group);
    if (r->checked)
        snprintf(wrong, sizeof(wrong), "%llu", (unsigned long long)r->wrong);
    if (c->root >= 0)
        snprintf(root, sizeof(root), "%d", c->root);
    fprintf(f, " %12llu %12zu %9s %6s %5s %5s %10.2f %10.2f %10.2f %9.2f %9.2f %7s %7zu %15s "
               "%-*s%s%s\n",
            (unsigned long long)c->counts.bytes, c->counts.param_count, dl_dtype_names[c->dtype],
            c->coll->has_op ? dl_op_names[c->op] : "none", root,
            c->place == DL_PLACE_IN ? "in" : "out", r->t.mean * 1e6, r->t.p50 * 1e6,
            r->t.p99 * 1e6, r->algbw_gbps, r->busbw_gbps, wrong, r->t.n, chose,
            group[0] ? 9 : 0,
            (unsigned)r->stop < DL_STOP_COUNT ? dl_stop_names[r->stop] : "?", group,
            r->wrong ? "  WRONG" : "");
    fflush(f);
}

static int progress_shown;

void dl_progress(size_t done, size_t total, const char *what)
{
    if (!isatty(STDERR_FILENO))
        return;
    fprintf(stderr, "\r\033[K[%zu/%zu] %s", done, total, what);
    fflush(stderr);
    progress_shown = 1;
}

void dl_progress_end(void)
{
    if (progress_shown)
        fprintf(stderr, "\r\033[K");
    progress_shown = 0;
}
