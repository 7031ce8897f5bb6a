/* The declarative option table: parsing, the JSON echo and its inverse,
 * the composed command lines (dl_optset_t) and the tables' registry. The
 * views of a table for people (--help, the man page, completion) are in
 * opt_help.c. */
#include "util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FIELD(t, o, type) ((type *)((char *)(t) + (o)->offset))

void dl_opt_range(const dl_opt_t *o, long *min, long *max)
{
    (void)o;
    *min = 0;
    *max = INT_MAX;
}

static dl_status_t set_value(const dl_opt_t *o, void *t, const char *val)
{
    char *end;
    errno = 0;
    /* strtol and strtod skip leading blanks: a number is written without them */
    if ((o->kind == DL_OPT_INT || o->kind == DL_OPT_DOUBLE || o->kind == DL_OPT_SIZE) &&
        isspace((unsigned char)val[0]))
        goto bad;
    switch (o->kind) {
    case DL_OPT_FLAG:
        *FIELD(t, o, int) = val ? (strcmp(val, "0") != 0 && strcmp(val, "no") != 0) : 1;
        return DL_OK;
    case DL_OPT_STR:
        if (!o->choices) {
            *FIELD(t, o, const char *) = val;
            return DL_OK;
        }
        __attribute__((fallthrough)); /* one of the names: the field points at it */
    case DL_OPT_ENUM: {
        int i = dl_choices_find(o->choices, val);
        if (i < 0) {
            dl_choices_unknown(o->choices, o->longname, val, 0);
            return DL_ERR_USAGE;
        }
        if (o->kind == DL_OPT_ENUM)
            *FIELD(t, o, int) = i;
        else
            *FIELD(t, o, const char *) = o->choices->names[i];
        return DL_OK;
    }
    case DL_OPT_LIST:
        return dl_choices_mask(o->choices, o->longname, val, FIELD(t, o, uint32_t));
    case DL_OPT_INT: {
        long v = strtol(val, &end, 10), lo, hi;
        if (end == val || *end)
            goto bad;
        dl_opt_range(o, &lo, &hi);
        if (errno == ERANGE || v < lo || v > hi) {
            dl_err("option --%s: '%s' is out of range (%ld..%ld)", o->longname, val, lo, hi);
            return DL_ERR_USAGE;
        }
        *FIELD(t, o, long) = v;
        return DL_OK;
    }
    case DL_OPT_DOUBLE: {
        double v = strtod(val, &end);
        if (end == val || *end || errno || !isfinite(v))
            goto bad;
        *FIELD(t, o, double) = v;
        return DL_OK;
    }
    case DL_OPT_SIZE: {
        uint64_t v;
        if (dl_size_parse(val, &v) != DL_OK)
            goto bad;
        *FIELD(t, o, uint64_t) = v;
        return DL_OK;
    }
    }
bad:
    dl_err("option --%s: '%s' is not a valid %s", o->longname, val,
           o->metavar ? o->metavar : "value");
    return DL_ERR_USAGE;
}

static const dl_opt_t *find_long(const dl_opt_t *opts, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(opts[i].longname) == len && strncmp(opts[i].longname, name, len) == 0)
            return &opts[i];
    return NULL;
}

static const dl_opt_t *find_short(const dl_opt_t *opts, size_t n, char c)
{
    for (size_t i = 0; i < n; i++)
        if (opts[i].shortname == c)
            return &opts[i];
    return NULL;
}

const dl_opt_t *dl_opt_find(const dl_opt_t *opts, size_t nopts, const char *name)
{
    if (name[0] == '-' && name[1] && name[1] != '-' && !name[2])
        return find_short(opts, nopts, name[1]);
    name += name[0] == '-' && name[1] == '-' ? 2 : 0;
    return find_long(opts, nopts, name, strlen(name));
}

/* An unknown option's line, with the closest long name a user may give. */
static void unknown_option(const dl_opt_t *opts, size_t n, const char *a)
{
    char line[512], word[128];
    const char *names[256];
    size_t k = 0;
    for (size_t i = 0; i < n && k < DL_ARRAY_SIZE(names); i++)
        if (!(opts[i].flags & DL_OPT_FIXED))
            names[k++] = opts[i].longname;
    snprintf(line, sizeof(line), "unknown option '%s'", a);
    snprintf(word, sizeof(word), "%.*s", (int)strcspn(a + (a[1] == '-' ? 2 : 1), "="),
             a + (a[1] == '-' ? 2 : 1));
    const char *s = a[1] == '-' ? dl_suggest(word, names, k) : NULL;
    if (s)
        snprintf(line + strlen(line), sizeof(line) - strlen(line), " (did you mean '--%s'?)", s);
    dl_err("%s (see --help)", line);
}

dl_status_t dl_opts_defaults(const dl_opt_t *opts, size_t nopts, void *target)
{
    for (size_t i = 0; i < nopts; i++)
        if (opts[i].def && set_value(&opts[i], target, opts[i].def) != DL_OK)
            return DL_ERR_INTERNAL;
    return DL_OK;
}

static size_t field_size(const dl_opt_t *o)
{
    switch (o->kind) {
    case DL_OPT_FLAG:
    case DL_OPT_ENUM: return sizeof(int);
    case DL_OPT_STR: return sizeof(char *);
    case DL_OPT_INT: return sizeof(long);
    case DL_OPT_DOUBLE: return sizeof(double);
    case DL_OPT_SIZE: return sizeof(uint64_t);
    case DL_OPT_LIST: return sizeof(uint32_t);
    }
    return 0;
}

const dl_opt_t *dl_opts_first_given(const dl_opt_t *opts, size_t nopts, const void *target)
{
    size_t size = 0;
    for (size_t i = 0; i < nopts; i++)
        if (opts[i].offset + field_size(&opts[i]) > size)
            size = opts[i].offset + field_size(&opts[i]);
    char *def = calloc(1, size ? size : 1);
    const dl_opt_t *given = NULL;
    if (def && dl_opts_defaults(opts, nopts, def) == DL_OK)
        for (size_t i = 0; i < nopts && !given; i++)
            if (memcmp((const char *)target + opts[i].offset, def + opts[i].offset,
                       field_size(&opts[i])))
                given = &opts[i];
    free(def);
    return given;
}

void dl_opts_share(const dl_opt_t *from, size_t nfrom, const void *from_target,
                   const dl_opt_t *to, size_t nto, void *to_target)
{
    for (size_t i = 0; i < nto; i++) {
        const dl_opt_t *f = find_long(from, nfrom, to[i].longname, strlen(to[i].longname));
        if (f && f->kind == to[i].kind)
            memcpy((char *)to_target + to[i].offset, (const char *)from_target + f->offset,
                   field_size(f));
    }
}

dl_status_t dl_opt_assign(const dl_opt_t *o, void *target, const char *val)
{
    if (set_value(o, target, val) != DL_OK)
        return DL_ERR_USAGE;
    const char *msg = o->validate ? o->validate((char *)target + o->offset) : NULL;
    if (msg) {
        dl_err("option --%s: %s", o->longname, msg);
        return DL_ERR_USAGE;
    }
    return DL_OK;
}

dl_status_t dl_opts_parse(const dl_opt_t *opts, size_t nopts, void *target, int argc,
                          char **argv, char **pos, int maxpos, int *npos, int *want_help)
{
    *want_help = 0;
    if (npos)
        *npos = 0;
    if (dl_opts_defaults(opts, nopts, target) != DL_OK)
        return DL_ERR_INTERNAL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        const dl_opt_t *o = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            *want_help = 1;
            return DL_OK;
        }
        if (a[0] != '-' || a[1] == '\0') {
            if (!pos || !npos || *npos >= maxpos) {
                dl_err("unexpected argument '%s'", a);
                return DL_ERR_USAGE;
            }
            pos[(*npos)++] = argv[i];
            continue;
        }
        if (a[1] == '-') {
            const char *eq = strchr(a + 2, '=');
            size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            o = find_long(opts, nopts, a + 2, len);
            if (!o && len > 3 && strncmp(a + 2, "no-", 3) == 0) {
                o = find_long(opts, nopts, a + 5, len - 3);
                if (o && o->kind == DL_OPT_FLAG && !eq) {
                    *FIELD(target, o, int) = 0;
                    continue;
                }
                o = NULL;
            }
            if (eq)
                val = eq + 1;
        } else if (a[2] == '\0') {
            o = find_short(opts, nopts, a[1]);
        } else {
            o = find_short(opts, nopts, a[1]);
            if (o && o->kind != DL_OPT_FLAG)
                val = a + 2; /* -b8 */
            else
                o = NULL;
        }
        if (!o) {
            unknown_option(opts, nopts, a);
            return DL_ERR_USAGE;
        }
        if (o->flags & DL_OPT_FIXED) {
            dl_err("--%s is %s", o->longname, o->help);
            return DL_ERR_USAGE;
        }
        if (o->kind != DL_OPT_FLAG && !val) {
            if (i + 1 >= argc) {
                dl_err("option --%s needs a value (%s)", o->longname,
                       o->metavar ? o->metavar : "value");
                return DL_ERR_USAGE;
            }
            val = argv[++i];
        }
        if (dl_opt_assign(o, target, val) != DL_OK)
            return DL_ERR_USAGE;
    }
    return DL_OK;
}

void dl_opts_echo(const dl_opt_t *opts, size_t nopts, const void *target, void *json_obj)
{
    cJSON *obj = json_obj;
    for (size_t i = 0; i < nopts; i++) {
        const dl_opt_t *o = &opts[i];
        const void *t = target;
        if (o->flags & DL_OPT_FIXED) /* not this run's to say: another command's row */
            continue;
        switch (o->kind) {
        case DL_OPT_FLAG:
            cJSON_AddBoolToObject(obj, o->longname, *FIELD(t, o, const int));
            break;
        case DL_OPT_STR: {
            const char *s = *FIELD(t, o, const char *const);
            if (s)
                cJSON_AddStringToObject(obj, o->longname, s);
            else
                cJSON_AddNullToObject(obj, o->longname);
            break;
        }
        case DL_OPT_INT:
            cJSON_AddNumberToObject(obj, o->longname, (double)*FIELD(t, o, const long));
            break;
        case DL_OPT_DOUBLE:
            cJSON_AddNumberToObject(obj, o->longname, *FIELD(t, o, const double));
            break;
        case DL_OPT_SIZE:
            cJSON_AddNumberToObject(obj, o->longname, (double)*FIELD(t, o, const uint64_t));
            break;
        case DL_OPT_ENUM:
            cJSON_AddStringToObject(obj, o->longname, o->choices->names[*FIELD(t, o, const int)]);
            break;
        case DL_OPT_LIST: { /* the names, as a list option was written before it had a mask */
            char names[1024];
            dl_choices_mask_text(o->choices, *FIELD(t, o, const uint32_t), names, sizeof(names));
            cJSON_AddStringToObject(obj, o->longname, names);
            break;
        }
        }
    }
}

int dl_opts_command(const dl_opt_t *opts, size_t nopts, void *target, int argc, char **argv,
                    char **pos, int maxpos, int *npos, const char *usage)
{
    int help = 0;
    dl_status_t st = dl_opts_parse(opts, nopts, target, argc, argv, pos, maxpos, npos, &help);
    if (help) {
        dl_opts_help(stdout, usage, opts, nopts);
        return 0;
    }
    return st == DL_OK ? -1 : 2;
}

const char *dl_opt_positive(const void *field)
{
    return *(const double *)field > 0 ? NULL : "must be > 0";
}

const char *dl_opt_nonneg_long(const void *field)
{
    return *(const long *)field >= 0 ? NULL : "must be >= 0";
}

const char *dl_opt_percent(const void *field)
{
    double v = *(const double *)field;
    return v >= 0 && v < 100 ? NULL : "must be a percentage in [0, 100)";
}

/* The inverse of dl_opts_echo: options carried as its JSON (to a worker)
 * become the struct again; strings point into json_obj, which must live
 * as long as target. A key missing or of the wrong type: DL_ERR_INTERNAL. */
dl_status_t dl_opts_load_json(const dl_opt_t *opts, size_t nopts, void *target,
                              const void *json_obj)
{
    const cJSON *obj = json_obj;
    for (size_t i = 0; i < nopts; i++) {
        const dl_opt_t *o = &opts[i];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, o->longname);
        if (o->kind == DL_OPT_FLAG ? !cJSON_IsBool(v)
            : o->kind == DL_OPT_STR ? !(cJSON_IsString(v) || cJSON_IsNull(v))
            : o->kind == DL_OPT_ENUM || o->kind == DL_OPT_LIST ? !cJSON_IsString(v)
                                                              : !cJSON_IsNumber(v))
            return DL_ERR_INTERNAL;
        if ((o->kind == DL_OPT_ENUM || o->kind == DL_OPT_LIST) &&
            set_value(o, target, v->valuestring) != DL_OK)
            return DL_ERR_INTERNAL;
        switch (o->kind) {
        case DL_OPT_FLAG: *FIELD(target, o, int) = cJSON_IsTrue(v); break;
        case DL_OPT_STR:
            *FIELD(target, o, const char *) = cJSON_IsString(v) ? v->valuestring : NULL;
            break;
        case DL_OPT_INT: *FIELD(target, o, long) = (long)v->valuedouble; break;
        case DL_OPT_DOUBLE: *FIELD(target, o, double) = v->valuedouble; break;
        case DL_OPT_SIZE: *FIELD(target, o, uint64_t) = (uint64_t)v->valuedouble; break;
        case DL_OPT_ENUM:
        case DL_OPT_LIST: break; /* set above, by name */
        }
    }
    return DL_OK;
}

dl_status_t dl_optset_init(dl_optset_t *s, const dl_opt_t *base, size_t nbase, size_t base_size,
                           const dl_opt_t *const *extra, const size_t *nextra,
                           const size_t *extra_size, size_t nsets)
{
    size_t n = nbase, size = base_size;
    memset(s, 0, sizeof(*s));
    for (size_t k = 0; k < nsets; k++)
        n += nextra[k];
    s->opts = calloc(n ? n : 1, sizeof(dl_opt_t));
    s->offset = calloc(nsets + 1, sizeof(size_t));
    if (!s->opts || !s->offset)
        return DL_ERR_NOMEM;
    memcpy(s->opts, base, nbase * sizeof(dl_opt_t));
    s->n = nbase;
    for (size_t k = 0; k < nsets; k++) {
        size = (size + 15) & ~(size_t)15; /* every member struct starts aligned */
        s->offset[k] = size;
        for (size_t i = 0; i < nextra[k]; i++) {
            /* Two backends may share an option (the same name): the first
             * row parses it, into its own struct. */
            if (find_long(s->opts, s->n, extra[k][i].longname, strlen(extra[k][i].longname)))
                continue;
            s->opts[s->n] = extra[k][i];
            s->opts[s->n++].offset += size;
        }
        size += extra_size[k];
    }
    s->target = calloc(1, size ? size : 1);
    return s->target ? DL_OK : DL_ERR_NOMEM;
}

void dl_optset_free(dl_optset_t *s)
{
    free(s->opts);
    free(s->offset);
    free(s->target);
    memset(s, 0, sizeof(*s));
}

dl_status_t dl_optset_fix(dl_optset_t *s, const char *name, const char *why)
{
    dl_opt_t *o = (dl_opt_t *)dl_opt_find(s->opts, s->n, name);
    if (!o)
        return DL_ERR_INTERNAL;
    o->flags |= DL_OPT_FIXED;
    o->help = why;
    return DL_OK;
}

/* The commands' tables, each added by DL_OPTS_EXPORT before main. */
#define DL_MAX_TABLES 16
static const dl_opt_table_t *tables[DL_MAX_TABLES];
static size_t ntables;

void dl_opt_tables_add(const dl_opt_table_t *t)
{
    if (ntables < DL_MAX_TABLES)
        tables[ntables++] = t;
}

const dl_opt_table_t *dl_opt_table_find(const char *cmd)
{
    for (size_t i = 0; i < ntables; i++)
        if (strcmp(tables[i]->cmd, cmd) == 0)
            return tables[i];
    return NULL;
}

const dl_opt_table_t *dl_opt_table_at(size_t i)
{
    return i < ntables ? tables[i] : NULL;
}
