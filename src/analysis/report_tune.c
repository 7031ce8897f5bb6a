/* report --tune: the curve's fusion advice beside what tune measured. */
#include "analysis.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

static double num(const cJSON *o, const char *k)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(j) ? j->valuedouble : NAN;
}

/* A candidate's fusion size in bytes (Horovod's threshold, DDP's cap). */
static double fused_bytes(const cJSON *c)
{
    double cap = num(c, "bucket_cap_mb");
    return isfinite(cap) ? cap * 1048576.0 : num(c, "fusion_threshold_bytes");
}

void dl_an_tune_compare(FILE *f, cJSON *j, const dl_run_t *r, const cJSON *tune)
{
    char prof[64] = "", line[1024];
    uint64_t thr = dl_an_fusion_threshold(r, prof, sizeof(prof));
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(tune, "recommendation");
    const cJSON *sets = rec ? cJSON_GetObjectItemCaseSensitive(rec, "settings") : NULL;
    const cJSON *cands = cJSON_GetObjectItemCaseSensitive(tune, "candidates");
    const cJSON *verdict = rec ? cJSON_GetObjectItemCaseSensitive(rec, "verdict") : NULL;
    /* The measured best, and the measured candidate nearest the curve's size. */
    double best_exp = NAN, near_exp = NAN, near_bytes = NAN, best_bytes = NAN;
    for (const cJSON *c = cands ? cands->child : NULL; c; c = c->next) {
        double e = num(c, "exposed_us"), b = fused_bytes(c);
        if (!isfinite(e))
            continue;
        if (!isfinite(near_bytes) || fabs(log2(b + 1) - log2((double)thr + 1)) <
                                         fabs(log2(near_bytes + 1) - log2((double)thr + 1)) ||
            (b == near_bytes && e < near_exp)) {
            near_bytes = b;
            near_exp = e;
        }
    }
    int in_best = 0;
    for (const cJSON *s = sets ? sets->child : NULL; s; s = s->next) {
        for (const cJSON *c = cands ? cands->child : NULL; c; c = c->next)
            if (num(c, "exposed_us") == num(s, "exposed_us") && isfinite(num(s, "exposed_us"))) {
                double b = fused_bytes(c);
                if (!isfinite(best_bytes)) {
                    best_bytes = b;
                    best_exp = num(c, "exposed_us");
                }
                in_best |= b == near_bytes;
            }
    }
    if (!thr || !isfinite(best_exp)) {
        snprintf(line, sizeof(line), "not compared: %s",
                 !thr ? "no all-reduce curve in this run" : "the tune record measured nothing");
    } else {
        snprintf(line, sizeof(line),
                 "the curve says %.4g MiB (profile %s); tune measured %s %.4g MiB (exposed "
                 "%.4g ms per step); tune's nearest candidate to the curve's size, %.4g MiB, "
                 "exposed %.4g ms: %s",
                 (double)thr / 1048576, prof,
                 cJSON_IsString(verdict) && strcmp(verdict->valuestring, "winner") == 0
                     ? "the winner" : "among the best",
                 best_bytes / 1048576, best_exp / 1e3, near_bytes / 1048576, near_exp / 1e3,
                 in_best ? "the curve's advice agrees with the measurement"
                         : "the curve's advice is not what the measured step prefers: use tune's");
    }
    if (f)
        fprintf(f, "\n== tune's measured answer beside the curve ==\n  %s\n", line);
    else if (j)
        cJSON_AddStringToObject(j, "tune_comparison", line);
}
