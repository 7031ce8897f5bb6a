/* The views of an option table for people, from the same rows that parse:
 * --help text, a man page section (roff), the words bash completion
 * offers, and the values one option takes. A row with choices lists them,
 * so no help text types a value by hand. */
#include "util.h"

#include <string.h>

static dl_help_style_t help_style = DL_HELP_TEXT;
static const char *values_of; /* DL_HELP_VALUES: the option asked about */

void dl_opts_help_style(dl_help_style_t style)
{
    help_style = style;
}

void dl_opts_help_values(const char *word)
{
    values_of = word;
    help_style = DL_HELP_VALUES;
}

/* "  -c, --collectives LIST": the left column of a row (and of -h). */
static void left_column(const dl_opt_t *o, char *left, size_t len)
{
    int n = o->shortname ? snprintf(left, len, "  -%c, --%s", o->shortname, o->longname)
                         : snprintf(left, len, "      --%s", o->longname);
    if (o->kind != DL_OPT_FLAG && n > 0 && (size_t)n < len)
        snprintf(left + n, len - (size_t)n, " %s", o->metavar ? o->metavar : "X");
}

/* What the row's choices add to its help: " (a, b or c)", for a list
 * " (a list of a, b or c, or all)", then the other spellings. */
static void choices_note(const dl_opt_t *o, char *buf, size_t len)
{
    const dl_choices_t *c = o->choices;
    char names[1024];
    buf[0] = '\0';
    if (!c)
        return;
    dl_choices_text(c, names, sizeof(names));
    size_t n = (size_t)snprintf(buf, len, o->kind == DL_OPT_LIST ? " (a list of %s, or all" : " (%s",
                                names);
    for (const char *const *a = c->aliases; a && a[0] && n < len; a += 2)
        n += (size_t)snprintf(buf + n, len - n, "%s%s%s%s=%s", a == c->aliases ? "; also " : ", ",
                              a == c->aliases && c->aliases_from ? c->aliases_from : "",
                              a == c->aliases && c->aliases_from ? " " : "", a[0], a[1]);
    if (n < len)
        snprintf(buf + n, len - n, ")");
}

/* The default in words: "[8]", or for a flag on by default how to turn it off. */
static void default_note(const dl_opt_t *o, char *buf, size_t len)
{
    buf[0] = '\0';
    if (o->def && o->kind != DL_OPT_FLAG)
        snprintf(buf, len, " [%s]", o->def);
    else if (o->kind == DL_OPT_FLAG && o->def && strcmp(o->def, "1") == 0)
        snprintf(buf, len, " [on; --no-%s turns off]", o->longname);
}

static void help_text(FILE *f, const char *usage, const dl_opt_t *opts, size_t nopts)
{
    static const dl_opt_t help = {"help", 'h', DL_OPT_FLAG, NULL, NULL, "this text", 0, NULL};
    char left[64], ch[1600], def[96];
    fprintf(f, "%s\n\nOptions:\n", usage);
    for (size_t i = 0; i <= nopts; i++) {
        const dl_opt_t *o = i < nopts ? &opts[i] : &help;
        if (o->flags & DL_OPT_FIXED)
            continue;
        left_column(o, left, sizeof(left));
        choices_note(o, ch, sizeof(ch));
        default_note(o, def, sizeof(def));
        fprintf(f, "%-34s %s%s%s\n", left, o->help, ch, def);
    }
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

static void roff_str(FILE *f, const char *s)
{
    dl_roff_line(f, s, strlen(s));
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

/* SYNOPSIS (the usage line, a wrapped one as one synopsis) and DESCRIPTION
 * (the usage text, then the page's hand-written part). */
static void roff_usage(FILE *f, const char *usage)
{
    const char *body = strstr(usage, "\n\n"), *syn = usage;
    size_t sl = body ? (size_t)(body - usage) : strlen(usage);
    if (strncmp(syn, "usage: ", 7) == 0)
        syn += 7, sl -= 7;
    fputs(".SH SYNOPSIS\n\\fB", f);
    for (size_t i = 0; i < sl;) {
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
}

/* The man page's view of the same table: SYNOPSIS, DESCRIPTION, then OPTIONS
 * (one tagged paragraph per row). */
static void help_roff(FILE *f, const char *usage, const dl_opt_t *opts, size_t nopts)
{
    char ch[1600];
    roff_usage(f, usage);
    fputs(".SH OPTIONS\n", f);
    for (size_t i = 0; i < nopts; i++) {
        const dl_opt_t *o = &opts[i];
        if (o->flags & DL_OPT_FIXED)
            continue;
        fputs(".TP\n", f);
        if (o->shortname)
            fprintf(f, "\\fB\\-%c\\fR, ", o->shortname);
        fputs("\\fB\\-\\-", f);
        roff_str(f, o->longname);
        fputs("\\fR", f);
        if (o->kind != DL_OPT_FLAG)
            fprintf(f, " \\fI%s\\fR", o->metavar ? o->metavar : "X");
        fputc('\n', f);
        roff_str(f, o->help);
        choices_note(o, ch, sizeof(ch));
        roff_str(f, ch);
        if (o->def && o->kind != DL_OPT_FLAG) {
            fputs(" [", f);
            roff_str(f, o->def);
            fputs("]", f);
        } else if (o->kind == DL_OPT_FLAG && o->def && strcmp(o->def, "1") == 0) {
            fputs(" [on; \\fB\\-\\-no\\-", f);
            roff_str(f, o->longname);
            fputs("\\fR turns off]", f);
        }
        fputc('\n', f);
    }
    fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nthis text\n", f);
}

/* Completion's view: every spelling of every option, one a line. */
static void help_words(FILE *f, const dl_opt_t *opts, size_t nopts)
{
    for (size_t i = 0; i < nopts; i++) {
        if (opts[i].flags & DL_OPT_FIXED)
            continue;
        fprintf(f, "--%s\n", opts[i].longname);
        if (opts[i].kind == DL_OPT_FLAG && opts[i].def && strcmp(opts[i].def, "1") == 0)
            fprintf(f, "--no-%s\n", opts[i].longname);
        if (opts[i].shortname)
            fprintf(f, "-%c\n", opts[i].shortname);
    }
    fprintf(f, "--help\n");
}

/* Completion's view of one option's values: its names (a list's "all" too). */
static void help_values(FILE *f, const dl_opt_t *opts, size_t nopts)
{
    const dl_opt_t *o = values_of ? dl_opt_find(opts, nopts, values_of) : NULL;
    for (int i = 0; o && o->choices && i < o->choices->n; i++)
        fprintf(f, "%s\n", o->choices->names[i]);
    if (o && o->kind == DL_OPT_LIST)
        fprintf(f, "all\n");
}

void dl_opts_help(FILE *f, const char *usage, const dl_opt_t *opts, size_t nopts)
{
    if (help_style == DL_HELP_ROFF)
        help_roff(f, usage, opts, nopts);
    else if (help_style == DL_HELP_WORDS)
        help_words(f, opts, nopts);
    else if (help_style == DL_HELP_VALUES)
        help_values(f, opts, nopts);
    else
        help_text(f, usage, opts, nopts);
}
