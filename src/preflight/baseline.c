/* Baseline rows from an earlier dlcomm run (run.json). */
#include "internal.h"

#include <string.h>

static int str_is(const cJSON *o, const char *key, const char *want)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && strcmp(v->valuestring, want) == 0;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The best busbw among matching rows of every profile: a baseline is what
 * the system can do, and the best profile says that. Only float32 sum
 * out-of-place rows match, as preflight measures those. */
double pf_baseline_busbw(const cJSON *run, const char *coll, uint64_t bytes, int ranks)
{
    double best = -1;
    const cJSON *prof, *row;
    cJSON_ArrayForEach(prof, cJSON_GetObjectItemCaseSensitive(run, "profiles"))
    {
        cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(prof, "results"))
        {
            if (!str_is(row, "collective", coll) || !str_is(row, "dtype", "float32") ||
                str_is(row, "placement", "in") || num(row, "ranks") != ranks ||
                num(row, "bytes") != (double)bytes)
                continue;
            if (!str_is(row, "op", "sum") && !str_is(row, "op", "none"))
                continue;
            double b = num(row, "busbw_gbps");
            best = b > best ? b : best;
        }
    }
    return best;
}
