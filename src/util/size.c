/* Sizes with binary suffixes, size lists, and name lists. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

dl_status_t dl_size_parse(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return DL_ERR_USAGE;
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '-' || *p == '+')
        return DL_ERR_USAGE;
    errno = 0;
    char *end;
    double v = strtod(p, &end);
    if (end == p || errno || !isfinite(v) || v < 0)
        return DL_ERR_USAGE;
    double mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 1024.0; end++; break;
    case 'M': mult = 1024.0 * 1024; end++; break;
    case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
    case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (mult > 1 && (*end == 'i' || *end == 'I'))
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0')
        return DL_ERR_USAGE;
    double bytes = v * mult;
    if (bytes < 1 || bytes > 1.8e19 || bytes != floor(bytes))
        return DL_ERR_USAGE;
    *out = (uint64_t)bytes;
    return DL_OK;
}

void dl_size_format(uint64_t bytes, char *buf, size_t len)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = (double)bytes;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (v == floor(v))
        snprintf(buf, len, "%.0f %s", v, unit[u]);
    else
        snprintf(buf, len, "%.1f %s", v, unit[u]);
}

dl_status_t dl_sizes_build(uint64_t min, uint64_t max, double factor, uint64_t step,
                           dl_sizes_t *out)
{
    out->v = NULL;
    out->n = 0;
    if (min == 0 || max < min || (!step && !(factor > 1.0)))
        return DL_ERR_USAGE;
    size_t cap = 16;
    uint64_t *v = malloc(cap * sizeof(*v));
    if (!v)
        return DL_ERR_NOMEM;
    size_t n = 0;
    for (double s = (double)min; s <= (double)max;) {
        if (n == cap) {
            uint64_t *nv = realloc(v, (cap *= 2) * sizeof(*v));
            if (!nv) {
                free(v);
                return DL_ERR_NOMEM;
            }
            v = nv;
        }
        v[n++] = (uint64_t)s;
        if (n > DL_SIZES_MAX) {
            free(v);
            return DL_ERR_USAGE;
        }
        double next = step ? s + (double)step : floor(s * factor);
        if (next <= s)
            next = s + 1;
        s = next;
    }
    out->v = v;
    out->n = n;
    return DL_OK;
}

void dl_sizes_free(dl_sizes_t *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
