/* Fault injection for tests: DLCOMM_INJECT="kind:rank[:profile[:factor]]".
 * kinds: hang, crash, corrupt, error, slow. rank -1 or '*' = every rank. */
#include "backends.h"

#include <stdlib.h>
#include <string.h>

dl_status_t dl_inject_parse(const char *s, dl_inject_t *out)
{
    static const char *const kinds[] = {"none", "hang", "crash", "corrupt", "error", "slow"};
    memset(out, 0, sizeof(*out));
    out->rank = -1;
    out->factor = 2.0;
    if (!s || !*s)
        return DL_OK;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    char *save = NULL, *kind = strtok_r(buf, ":", &save), *rank = strtok_r(NULL, ":", &save);
    char *prof = strtok_r(NULL, ":", &save), *factor = strtok_r(NULL, ":", &save);
    size_t k;
    for (k = 1; kind && k < DL_ARRAY_SIZE(kinds); k++)
        if (strcmp(kind, kinds[k]) == 0)
            break;
    if (!kind || k == DL_ARRAY_SIZE(kinds)) {
        dl_err("DLCOMM_INJECT='%s': kind must be hang, crash, corrupt, error or slow", s);
        return DL_ERR_USAGE;
    }
    out->kind = (dl_inject_kind_t)k;
    if (rank && strcmp(rank, "*") != 0) {
        char *end;
        long r = strtol(rank, &end, 10);
        if (*end || r < -1) {
            dl_err("DLCOMM_INJECT='%s': '%s' is not a rank", s, rank);
            return DL_ERR_USAGE;
        }
        out->rank = (int)r;
    }
    if (prof && strcmp(prof, "*") != 0)
        snprintf(out->profile, sizeof(out->profile), "%s", prof);
    if (factor) {
        char *end;
        out->factor = strtod(factor, &end);
        if (*end || !(out->factor > 0)) {
            dl_err("DLCOMM_INJECT='%s': '%s' is not a factor", s, factor);
            return DL_ERR_USAGE;
        }
    }
    return DL_OK;
}

dl_inject_kind_t dl_inject_active(const dl_inject_t *inj, int rank, const char *profile)
{
    if (inj->kind == DL_INJECT_NONE)
        return DL_INJECT_NONE;
    if (inj->rank >= 0 && inj->rank != rank)
        return DL_INJECT_NONE;
    if (inj->profile[0] && (!profile || strcmp(inj->profile, profile) != 0))
        return DL_INJECT_NONE;
    return inj->kind;
}
