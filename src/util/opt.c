/* The declarative option table: parsing, --help, and the JSON echo. */
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
        *FIELD(t, o, const char *) = val;
        return DL_OK;
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

dl_status_t dl_opts_parse(const dl_opt_t *opts, size_t nopts, void *target, int argc,
                          char **argv, char **pos, int maxpos, int *npos, int *want_help)
{
    *want_help = 0;
    if (npos)
        *npos = 0;
    for (size_t i = 0; i < nopts; i++)
        if (opts[i].def && set_value(&opts[i], target, opts[i].def) != DL_OK)
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
            dl_err("unknown option '%s' (see --help)", a);
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
        if (set_value(o, target, val) != DL_OK)
            return DL_ERR_USAGE;
        if (o->validate) {
            const char *msg = o->validate((char *)target + o->offset);
            if (msg) {
                dl_err("option --%s: %s", o->longname, msg);
                return DL_ERR_USAGE;
            }
        }
    }
    return DL_OK;
}

static dl_help_style_t help_style = DL_HELP_TEXT;

void dl_opts_help_style(dl_help_style_t style)
{
    help_style = style;
}

static void help_text(FILE *f, const char *usage, const dl_opt_t *opts, size_t nopts)
{
    fprintf(f, "%s\n\nOptions:\n", usage);
    for (size_t i = 0; i < nopts; i++) {
        const dl_opt_t *o = &opts[i];
        char left[64];
        int n = o->shortname ? snprintf(left, sizeof(left), "  -%c, --%s", o->shortname, o->longname)
                             : snprintf(left, sizeof(left), "      --%s", o->longname);
        if (o->kind != DL_OPT_FLAG && n < (int)sizeof(left))
            snprintf(left + n, sizeof(left) - (size_t)n, " %s", o->metavar ? o->metavar : "X");
        fprintf(f, "%-34s %s", left, o->help);
        if (o->def && o->kind != DL_OPT_FLAG)
            fprintf(f, " [%s]", o->def);
        else if (o->kind == DL_OPT_FLAG && o->def && strcmp(o->def, "1") == 0)
            fprintf(f, " [on; --no-%s turns off]", o->longname);
        fputc('\n', f);
    }
    fprintf(f, "  -h, --help                         this text\n");
}

/* One line of text as roff: backslashes and minus signs escaped, a leading
 * control character neutralised, and a break point (\:) after a comma or a
 * bar that a word follows, and after the slashes of a long path, so that a
 * list of values or a path can wrap where a line needs it (without, groff
 * cannot fit such a word and warns). */
/* Whether the word around s[i] is too long to leave unbroken: a path
 * breaks at its slashes only then, so a short one stays whole. */
static int long_word(const char *s, size_t n, size_t i)
{
    size_t a = i, b = i;
    while (a > 0 && s[a - 1] != ' ')
        a--;
    while (b < n && s[b] != ' ')
        b++;
    return b - a > 24;
}

void dl_roff_line(FILE *f, const char *s, size_t n)
{
    if (n && (s[0] == '.' || s[0] == '\''))
        fputs("\\&", f);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\')
            fputs("\\e", f);
        else if (s[i] == '-')
            fputs("\\-", f);
        else
            fputc(s[i], f);
        if (i + 1 < n && s[i + 1] != ' ' && (s[i] == ',' || s[i] == '|' || (s[i] == '/' && long_word(s, n, i))))
            fputs("\\:", f);
    }
}

static const char *man_description;

void dl_opts_man_description(const char *roff)
{
    man_description = roff;
}

/* A usage text's body as roff: a blank line starts a paragraph, and lines
 * indented by two spaces or more (a legend, a sample of output) are set as
 * they are, not filled. */
static void roff_body(FILE *f, const char *body)
{
    int literal = 0, para = 1;
    for (const char *l = body; *l;) {
        size_t n = strcspn(l, "\n");
        int indented = n >= 2 && l[0] == ' ' && l[1] == ' ';
        if (!n || indented != literal) {
            if (literal)
                fputs(".fi\n", f);
            literal = 0;
            para = 1;
        }
        if (n) {
            if (para)
                fputs(".PP\n", f);
            if (para && indented)
                fputs(".nf\n", f);
            literal = indented;
            para = 0;
            dl_roff_line(f, l, n);
            fputc('\n', f);
        }
        l += n + (l[n] == '\n');
    }
    if (literal)
        fputs(".fi\n", f);
}

static void roff_option(FILE *f, const dl_opt_t *o)
{
    fputs(".TP\n", f);
    if (o->shortname)
        fprintf(f, "\\fB\\-%c\\fR, ", o->shortname);
    fputs("\\fB\\-\\-", f);
    dl_roff_line(f, o->longname, strlen(o->longname));
    fputs("\\fR", f);
    if (o->kind != DL_OPT_FLAG)
        fprintf(f, " \\fI%s\\fR", o->metavar ? o->metavar : "X");
    fputc('\n', f);
    dl_roff_line(f, o->help, strlen(o->help));
    if (o->def && o->kind != DL_OPT_FLAG) {
        fputs(" [", f);
        dl_roff_line(f, o->def, strlen(o->def));
        fputs("]", f);
    } else if (o->kind == DL_OPT_FLAG && o->def && strcmp(o->def, "1") == 0) {
        fputs(" [on; \\fB\\-\\-no\\-", f);
        dl_roff_line(f, o->longname, strlen(o->longname));
        fputs("\\fR turns off]", f);
    }
    fputc('\n', f);
}

/* The man page's view of the same table: SYNOPSIS (the usage line),
 * DESCRIPTION (the usage text, then the page's hand-written part), OPTIONS
 * (one tagged paragraph per row). */
static void help_roff(FILE *f, const char *usage, const dl_opt_t *opts, size_t nopts)
{
    const char *body = strstr(usage, "\n\n"), *syn = usage;
    size_t sl = body ? (size_t)(body - usage) : strlen(usage);
    if (strncmp(syn, "usage: ", 7) == 0)
        syn += 7, sl -= 7;
    fputs(".SH SYNOPSIS\n\\fB", f);
    for (size_t i = 0; i < sl;) { /* a wrapped usage line is one synopsis */
        size_t n = strcspn(syn + i, "\n");
        n = n < sl - i ? n : sl - i;
        size_t lead = strspn(syn + i, " ");
        lead = lead < n ? lead : n;
        if (i)
            fputc('\n', f);
        dl_roff_line(f, syn + i + lead, n - lead);
        i += n + 1;
    }
    fputs("\\fR\n.SH DESCRIPTION\n", f);
    if (body)
        roff_body(f, body + 2);
    if (man_description)
        fputs(man_description, f);
    fputs(".SH OPTIONS\n", f);
    for (size_t i = 0; i < nopts; i++)
        roff_option(f, &opts[i]);
    fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nthis text\n", f);
}

/* Completion's view: every spelling of every option, one a line. */
static void help_words(FILE *f, const dl_opt_t *opts, size_t nopts)
{
    for (size_t i = 0; i < nopts; i++) {
        fprintf(f, "--%s\n", opts[i].longname);
        if (opts[i].kind == DL_OPT_FLAG && opts[i].def && strcmp(opts[i].def, "1") == 0)
            fprintf(f, "--no-%s\n", opts[i].longname);
        if (opts[i].shortname)
            fprintf(f, "-%c\n", opts[i].shortname);
    }
    fprintf(f, "--help\n");
}

void dl_opts_help(FILE *f, const char *usage, const dl_opt_t *opts, size_t nopts)
{
    if (help_style == DL_HELP_ROFF)
        help_roff(f, usage, opts, nopts);
    else if (help_style == DL_HELP_WORDS)
        help_words(f, opts, nopts);
    else
        help_text(f, usage, opts, nopts);
}

void dl_opts_echo(const dl_opt_t *opts, size_t nopts, const void *target, void *json_obj)
{
    cJSON *obj = json_obj;
    for (size_t i = 0; i < nopts; i++) {
        const dl_opt_t *o = &opts[i];
        const void *t = target;
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
                                    : !cJSON_IsNumber(v))
            return DL_ERR_INTERNAL;
        switch (o->kind) {
        case DL_OPT_FLAG: *FIELD(target, o, int) = cJSON_IsTrue(v); break;
        case DL_OPT_STR:
            *FIELD(target, o, const char *) = cJSON_IsString(v) ? v->valuestring : NULL;
            break;
        case DL_OPT_INT: *FIELD(target, o, long) = (long)v->valuedouble; break;
        case DL_OPT_DOUBLE: *FIELD(target, o, double) = v->valuedouble; break;
        case DL_OPT_SIZE: *FIELD(target, o, uint64_t) = (uint64_t)v->valuedouble; break;
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
