/* --split: the world's ranks in concurrent groups, as nccl-tests'
 * NCCL_TESTS_SPLIT: rank r's colour is r OP value, the ranks of one colour
 * are one group, groups are numbered by colour and a group's ranks keep the
 * world's order. */
#include "backends.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *word, *sym;
} split_ops[DL_SPLIT_OPS] = {
    [DL_SPLIT_MOD] = {"MOD", "%"}, [DL_SPLIT_DIV] = {"DIV", "/"},
    [DL_SPLIT_AND] = {"AND", "&"}, [DL_SPLIT_OR] = {"OR", "|"},
};

static dl_status_t bad(const char *text, const char *why)
{
    dl_err("--split '%s': %s (MOD:k, DIV:k, AND:mask or OR:mask, as nccl-tests' "
           "NCCL_TESTS_SPLIT; %%k /k &mask |mask too)", text, why);
    return DL_ERR_USAGE;
}

/* A value as nccl-tests reads it: decimal, 0x hex or 0b binary. */
static int parse_value(const char *s, long *v)
{
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2, s += 2;
    if (!isalnum((unsigned char)s[0]))
        return -1;
    char *end = NULL;
    errno = 0;
    *v = strtol(s, &end, base);
    return errno || *end || *v < 0 || *v > 0x7fffffff ? -1 : 0;
}

dl_status_t dl_split_parse(const char *text, dl_split_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!text)
        return DL_OK;
    const char *s = text;
    int op = 0;
    for (int i = 1; i < DL_SPLIT_OPS && !op; i++) {
        size_t n = strlen(split_ops[i].word);
        if (strncasecmp(s, split_ops[i].word, n) == 0)
            op = i, s += n;
        else if (s[0] == split_ops[i].sym[0])
            op = i, s += 1;
    }
    if (!op)
        return bad(text, "no mode");
    while (*s == ':' || *s == ' ')
        s++;
    long v;
    if (parse_value(s, &v) != 0)
        return bad(text, "the value must be a whole number (decimal, 0x hex or 0b binary)");
    if ((op == DL_SPLIT_MOD || op == DL_SPLIT_DIV) && v < 1)
        return bad(text, "k must be at least 1");
    out->op = op;
    out->value = (int32_t)v;
    return DL_OK;
}

static long colour(const dl_split_t *s, int rank)
{
    switch (s->op) {
    case DL_SPLIT_MOD: return rank % s->value;
    case DL_SPLIT_DIV: return rank / s->value;
    case DL_SPLIT_AND: return rank & s->value;
    case DL_SPLIT_OR: return rank | s->value;
    default: return 0;
    }
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

int dl_split_group(const dl_split_t *s, int rank)
{
    if (s->op == DL_SPLIT_MOD || s->op == DL_SPLIT_DIV || s->op == DL_SPLIT_NONE)
        return (int)colour(s, rank); /* every colour below the largest is someone's */
    /* AND, OR: the colour's place among those the ranks have. */
    long *c = malloc((size_t)s->world * sizeof(long)), mine = colour(s, rank);
    if (!c)
        return 0;
    for (int r = 0; r < s->world; r++)
        c[r] = colour(s, r);
    qsort(c, (size_t)s->world, sizeof(long), cmp_long);
    int g = 0;
    for (int i = 0; i < s->world && c[i] < mine; i++)
        g += i == 0 || c[i] != c[i - 1];
    free(c);
    return g;
}

int dl_split_members(const dl_split_t *s, int group, int *ranks)
{
    int n = 0, any = -1;
    for (int r = 0; r < s->world && any < 0; r++)
        if (dl_split_group(s, r) == group)
            any = r;
    for (int r = 0; any >= 0 && r < s->world; r++)
        if (colour(s, r) == colour(s, any))
            ranks[n++] = r;
    return n;
}

int dl_split_rank(const dl_split_t *s, int rank)
{
    int n = 0;
    for (int r = 0; r < rank; r++)
        n += colour(s, r) == colour(s, rank);
    return n;
}

void dl_split_name(const dl_split_t *s, char *buf, size_t len)
{
    if (s->op <= DL_SPLIT_NONE || s->op >= DL_SPLIT_OPS)
        snprintf(buf, len, "none");
    else if (s->op == DL_SPLIT_AND || s->op == DL_SPLIT_OR)
        snprintf(buf, len, "%s:0x%x", split_ops[s->op].word, (unsigned)s->value);
    else
        snprintf(buf, len, "%s:%d", split_ops[s->op].word, (int)s->value);
}

dl_status_t dl_split_check(dl_split_t *s, int world)
{
    s->world = world;
    s->groups = 1;
    s->size = world;
    if (s->op == DL_SPLIT_NONE)
        return DL_OK;
    char name[48];
    dl_split_name(s, name, sizeof(name));
    if ((s->op == DL_SPLIT_MOD || s->op == DL_SPLIT_DIV) && world % s->value) {
        dl_err("--split %s: %d does not divide the %d ranks into groups of one size", name,
               (int)s->value, world);
        return DL_ERR_USAGE;
    }
    /* Groups measured side by side must be alike: one size. */
    int groups = 0, even = 1, first = -1;
    for (int r = 0; r < world; r++) {
        int lead = dl_split_rank(s, r) == 0; /* the first rank of its colour */
        groups += lead;
        if (lead) {
            int n = 0;
            for (int q = r; q < world; q++)
                n += colour(s, q) == colour(s, r);
            if (first < 0)
                first = n;
            even &= n == first;
        }
    }
    if (!even) {
        dl_err("--split %s: %d ranks make %d groups of unequal size; groups measured side by "
               "side must be the same size", name, world, groups);
        return DL_ERR_USAGE;
    }
    s->groups = groups;
    s->size = world / groups;
    return DL_OK;
}
