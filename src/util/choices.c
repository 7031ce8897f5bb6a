/* The values an option may take (dl_choices_t), and "did you mean": one
 * list of names drives the parse, the error line, --help and completion. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Optimal string alignment distance (Damerau-Levenshtein without repeated
 * edits of one substring): a swap of two neighbours is one typo, as a
 * missing, extra or wrong letter is. Words are short: rows on the stack. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return (size_t)-1;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *dl_suggest(const char *word, const char *const *names, size_t n)
{
    /* Close enough to be a typo: a third of the word's letters (at least
     * one, at most three), and never the whole of a short word. */
    size_t len = strlen(word), limit = len / 3 ? len / 3 : 1, best = (size_t)-1;
    const char *pick = NULL;
    if (limit > 3)
        limit = 3;
    for (size_t i = 0; i < n; i++) {
        if (!names[i])
            continue;
        size_t d = edit_distance(word, names[i]);
        if (d <= limit && d < best && d < strlen(names[i])) {
            best = d;
            pick = names[i];
        }
    }
    return pick;
}

void dl_suggest_append(char *buf, size_t len, const char *word, const char *const *names,
                       size_t n)
{
    const char *s = dl_suggest(word, names, n);
    size_t used = strlen(buf);
    if (s && used < len)
        snprintf(buf + used, len - used, " (did you mean '%s'?)", s);
}

int dl_choices_find(const dl_choices_t *c, const char *word)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(word, c->names[i]) == 0)
            return i;
    for (const char *const *a = c->aliases; a && a[0]; a += 2)
        if (strcmp(word, a[0]) == 0)
            for (int i = 0; i < c->n; i++)
                if (strcmp(a[1], c->names[i]) == 0)
                    return i;
    return -1;
}

void dl_choices_text(const dl_choices_t *c, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->n && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i == 0 ? "" : i == c->n - 1 ? " or " : ", ",
                              c->names[i]);
}

/* The closest name or alias to a word that is neither. */
static const char *closest(const dl_choices_t *c, const char *word)
{
    const char *names[128];
    size_t n = 0;
    for (int i = 0; i < c->n && n < DL_ARRAY_SIZE(names); i++)
        names[n++] = c->names[i];
    for (const char *const *a = c->aliases; a && a[0] && n < DL_ARRAY_SIZE(names); a += 2)
        names[n++] = a[0];
    return dl_suggest(word, names, n);
}

void dl_choices_unknown(const dl_choices_t *c, const char *opt, const char *word, int list)
{
    char names[1024], mean[96] = "";
    dl_choices_text(c, names, sizeof(names));
    size_t n = strlen(names);
    for (const char *const *a = c->aliases; a && a[0] && n < sizeof(names); a += 2)
        n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s%s%s", a == c->aliases ? " (also " : ", ",
                              a == c->aliases && c->aliases_from ? c->aliases_from : "",
                              a == c->aliases && c->aliases_from ? " " : "", a[0]);
    if (c->aliases && c->aliases[0] && n < sizeof(names))
        snprintf(names + n, sizeof(names) - n, ")");
    const char *s = closest(c, word);
    if (s)
        snprintf(mean, sizeof(mean), " (did you mean '%s'?)", s);
    if (list)
        dl_err("--%s: unknown %s '%s'%s; the %ss: %s, or all%s%s", opt, c->noun, word, mean,
               c->noun, names, c->note ? "; " : "", c->note ? c->note : "");
    else
        dl_err("--%s must be %s, not '%s'%s%s%s", opt, names, word, mean, c->note ? "; " : "",
               c->note ? c->note : "");
}

dl_status_t dl_choices_mask(const dl_choices_t *c, const char *opt, const char *s, uint32_t *mask)
{
    *mask = 0;
    char *copy = s ? strdup(s) : NULL, *save = NULL;
    if (s && !copy)
        return DL_ERR_NOMEM;
    dl_status_t st = DL_OK;
    for (char *w = copy ? strtok_r(copy, ",", &save) : NULL; w; w = strtok_r(NULL, ",", &save)) {
        int i = strcmp(w, "all") == 0 ? c->n : dl_choices_find(c, w);
        if (i < 0) {
            dl_choices_unknown(c, opt, w, 1);
            st = DL_ERR_USAGE;
            break;
        }
        *mask |= i == c->n ? (c->n >= 32 ? 0xffffffffu : (1u << c->n) - 1) : 1u << i;
    }
    free(copy);
    if (st == DL_OK && !*mask) {
        dl_err("--%s: empty %s list", opt, c->noun);
        st = DL_ERR_USAGE;
    }
    return st;
}

void dl_choices_mask_text(const dl_choices_t *c, uint32_t mask, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->n && n < len; i++)
        if (mask >> i & 1)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", c->names[i]);
}
