/* dlcomm __man (hidden): the man pages, written at build time. dlcomm(1) is
 * the overview of the commands; dlcomm-COMMAND(1) is the command's usage text
 * and option table (the ones behind its --help) around a short hand-written
 * part, docs/man/dlcomm-COMMAND.txt, in this plain format:
 *
 *   text before the first "== TITLE" line   more DESCRIPTION, after the usage
 *   == TITLE                                 a section of its own, after OPTIONS
 *   == EXIT STATUS                           replaces the common one
 *   == SEE ALSO                              follows dlcomm(1) there
 *   a blank line                             a new paragraph
 *   a line indented by 4 spaces              shown as it is (examples, output)
 *   "- item"                                 a list item
 *   "TERM:: text"                            a term and what it means
 *   `code`                                   bold
 *
 * (continuation lines of an item or a term are indented by 2). Why text
 * files, not strings in each command's C file: the prose is edited as prose,
 * beside the docs/ pages it summarises, and the docs test reads it to know
 * which options a page documents. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "util/util.h"
#include "version.h"

int dl_cmd_takes_options(const dl_cmd_t *c)
{
    return c->help && strcmp(c->name, "help") != 0 && strcmp(c->name, "version") != 0;
}

void dl_cmd_help(const dl_cmd_t *c, dl_help_style_t style)
{
    char name[32], help[] = "--help";
    snprintf(name, sizeof(name), "%s", c->name);
    char *argv[] = {name, help, NULL};
    if (style != DL_HELP_VALUES) /* dl_opts_help_values chose the option and the style */
        dl_opts_help_style(style);
    fflush(stdout);
    c->fn(2, argv);
    fflush(stdout);
    dl_opts_help_style(DL_HELP_TEXT);
}

/* Text with `code` spans as roff: the spans bold. */
static void roff_inline(FILE *f, const char *s, size_t n)
{
    int bold = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '`')
            continue;
        dl_roff_line(f, s + start, i - start);
        if (i < n)
            fputs((bold = !bold) ? "\\fB" : "\\fR", f);
        start = i + 1;
    }
    if (bold)
        fputs("\\fR", f);
}

typedef struct {
    const char *s; /* the line, without its newline */
    size_t n;
} man_line_t;

static size_t indent_of(man_line_t l)
{
    size_t i = 0;
    while (i < l.n && l.s[i] == ' ')
        i++;
    return i;
}

/* Lines [i, end) from a list item's or term's first line: those indented
 * by 2 (and not 4) continue it. */
static size_t continued(const man_line_t *l, size_t i, size_t end)
{
    size_t j = i + 1;
    while (j < end && l[j].n && indent_of(l[j]) >= 2 && indent_of(l[j]) < 4)
        j++;
    return j;
}

static void put_lines(FILE *f, const man_line_t *l, size_t from, size_t to, size_t skip)
{
    for (size_t k = from; k < to; k++) {
        size_t in = indent_of(l[k]) < skip ? indent_of(l[k]) : skip;
        roff_inline(f, l[k].s + in, l[k].n - in);
        fputc('\n', f);
    }
}

/* One block from line i (a literal block, an item, a term or a
 * paragraph); returns the line after it. */
static size_t man_block(FILE *f, const man_line_t *l, size_t i, size_t end)
{
    size_t j = i + 1;
    const char *dd = l[i].n > 2 ? strstr(l[i].s, ":: ") : NULL;
    if (dd && dd >= l[i].s + l[i].n)
        dd = NULL;
    if (indent_of(l[i]) >= 4) { /* as it is, blank lines inside kept */
        while (j < end && (!l[j].n || indent_of(l[j]) >= 4))
            j++;
        while (j > i + 1 && !l[j - 1].n)
            j--;
        fputs(".PP\n.RS 4\n.nf\n", f);
        for (size_t k = i; k < j; k++) {
            dl_roff_line(f, l[k].s + (l[k].n ? 4 : 0), l[k].n ? l[k].n - 4 : 0);
            fputc('\n', f);
        }
        fputs(".fi\n.RE\n", f);
        return j;
    }
    if (l[i].n > 2 && l[i].s[0] == '-' && l[i].s[1] == ' ') {
        j = continued(l, i, end);
        fputs(".IP \\(bu 2\n", f);
        roff_inline(f, l[i].s + 2, l[i].n - 2);
        fputc('\n', f);
        put_lines(f, l, i + 1, j, 2);
        return j;
    }
    if (dd) {
        j = continued(l, i, end);
        fputs(".TP\n", f);
        roff_inline(f, l[i].s, (size_t)(dd - l[i].s));
        fputc('\n', f);
        roff_inline(f, dd + 3, l[i].n - (size_t)(dd + 3 - l[i].s));
        fputc('\n', f);
        put_lines(f, l, i + 1, j, 2);
        return j;
    }
    while (j < end && l[j].n && indent_of(l[j]) == 0 && !(l[j].s[0] == '-' && l[j].s[1] == ' '))
        j++;
    fputs(".PP\n", f);
    put_lines(f, l, i, j, 0);
    return j;
}

static void man_blocks(FILE *f, const man_line_t *l, size_t from, size_t to)
{
    for (size_t i = from; i < to;)
        i = l[i].n ? man_block(f, l, i, to) : i + 1;
}

/* The hand-written text, split into lines; sections start at "== ". */
typedef struct {
    char *text;
    man_line_t *line;
    size_t n;
} man_text_t;

static dl_status_t man_text_read(const char *path, man_text_t *t)
{
    size_t len, cap = 64;
    memset(t, 0, sizeof(*t));
    if (dl_read_file(path, &t->text, &len) != DL_OK) {
        dl_err("%s: %s", path, dl_read_error());
        return DL_ERR_INPUT;
    }
    t->line = malloc(cap * sizeof(*t->line));
    for (const char *p = t->text; t->line && *p;) {
        size_t n = strcspn(p, "\n");
        if (t->n == cap && !(t->line = realloc(t->line, (cap *= 2) * sizeof(*t->line))))
            break;
        t->line[t->n++] = (man_line_t){p, n};
        p += n + (p[n] == '\n');
    }
    return t->line ? DL_OK : DL_ERR_NOMEM;
}

static int is_heading(man_line_t l, const char *title)
{
    if (l.n < 3 || strncmp(l.s, "== ", 3) != 0)
        return 0;
    return !title || (l.n - 3 == strlen(title) && strncmp(l.s + 3, title, l.n - 3) == 0);
}

/* The lines of section `title` (NULL: the text before the first heading). */
static void man_section(const man_text_t *t, const char *title, size_t *from, size_t *to)
{
    size_t i = 0;
    if (title)
        while (i < t->n && !is_heading(t->line[i], title))
            i++;
    *from = i + (title && i < t->n);
    for (*to = *from; *to < t->n && !is_heading(t->line[*to], NULL); (*to)++)
        ;
    if (title && i == t->n)
        *from = *to = t->n;
}

static int is_special(man_line_t l)
{
    return is_heading(l, "EXIT STATUS") || is_heading(l, "SEE ALSO");
}

static void put_upper(const char *s)
{
    for (; *s; s++)
        putchar(*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s);
}

static void man_header(const char *page, const char *what)
{
    printf(".TH \"");
    put_upper(page);
    printf("\" 1 \"\" \"dlcomm %s\" \"dlcomm Manual\"\n.ad l\n.nh\n.SH NAME\n", dl_version());
    dl_roff_line(stdout, page, strlen(page));
    printf(" \\- ");
    dl_roff_line(stdout, what, strlen(what));
    putchar('\n');
}

static void man_exit_status(void)
{
    printf(".SH \"EXIT STATUS\"\n.TP\n0\nall good\n.TP\n1\na check failed (wrong data, "
           "regression, pre\\-flight)\n.TP\n2\nbad usage or input\n.TP\n3\nthe run broke "
           "(communication error, timeout, interrupted)\n");
}

/* DESCRIPTION's hand-written part, as roff, for the option writer to place. */
static char *man_description(const man_text_t *t)
{
    char *buf = NULL;
    size_t len = 0, from, to;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return NULL;
    man_section(t, NULL, &from, &to);
    man_blocks(m, t->line, from, to);
    fclose(m);
    return buf;
}

static void man_sections(const man_text_t *t)
{
    for (size_t i = 0; i < t->n; i++) {
        if (!is_heading(t->line[i], NULL) || is_special(t->line[i]))
            continue;
        size_t to = i + 1;
        while (to < t->n && !is_heading(t->line[to], NULL))
            to++;
        printf(".SH \"");
        dl_roff_line(stdout, t->line[i].s + 3, t->line[i].n - 3);
        printf("\"\n");
        man_blocks(stdout, t->line, i + 1, to);
    }
}

static void man_tail(const man_text_t *t)
{
    size_t from, to;
    man_section(t, "EXIT STATUS", &from, &to);
    if (from < to) {
        printf(".SH \"EXIT STATUS\"\n");
        man_blocks(stdout, t->line, from, to);
    } else {
        man_exit_status();
    }
    man_section(t, "SEE ALSO", &from, &to);
    while (from < to && !t->line[from].n)
        from++;
    while (to > from && !t->line[to - 1].n)
        to--;
    printf(".SH \"SEE ALSO\"\n\\fBdlcomm\\fR(1)%s\n", from < to ? "," : "");
    put_lines(stdout, t->line, from, to, 0); /* one paragraph, after dlcomm(1) */
}

static int man_command(const dl_cmd_t *c, const char *path)
{
    man_text_t t;
    char page[48];
    if (man_text_read(path, &t) != DL_OK)
        return 2;
    snprintf(page, sizeof(page), "dlcomm-%s", c->name);
    man_header(page, c->help);
    char *desc = man_description(&t);
    if (dl_cmd_takes_options(c)) {
        dl_opts_man_description(desc ? desc : "");
        dl_cmd_help(c, DL_HELP_ROFF);
        dl_opts_man_description(NULL);
    } else {
        printf(".SH SYNOPSIS\n\\fBdlcomm %s\\fR\n.SH DESCRIPTION\n", c->name);
        fputs(desc ? desc : "", stdout);
    }
    man_sections(&t);
    man_tail(&t);
    free(desc);
    free(t.line);
    free(t.text);
    return 0;
}

/* dlcomm(1): what dlcomm is and its commands, each with its own page. */
static int man_overview(const dl_cmd_t *cmds, size_t n)
{
    man_header("dlcomm", "collective-communication benchmark and cluster health tool");
    printf(".SH SYNOPSIS\n\\fBmpirun \\-np\\fR \\fIN\\fR \\fBdlcomm\\fR \\fIcommand\\fR "
           "[\\fIoptions\\fR]\n.br\n\\fBdlcomm\\fR \\fIcommand\\fR [\\fIoptions\\fR]\n"
           ".SH DESCRIPTION\n");
    printf("dlcomm measures the collectives distributed training depends on over MPI, NCCL or a\n"
           "model of a system, checks every result, compares runs, and checks hosts before a\n"
           "job. Each command has its own page, and \\fBdlcomm\\fR \\fIcommand\\fR "
           "\\fB\\-\\-help\\fR lists its options.\n.SH COMMANDS\n");
    for (size_t i = 0; i < n; i++)
        if (cmds[i].help) {
            printf(".TP\n\\fBdlcomm\\-%s\\fR(1)\n", cmds[i].name);
            dl_roff_line(stdout, cmds[i].help, strlen(cmds[i].help));
            printf("\n");
        }
    man_exit_status();
    printf(".SH ENVIRONMENT\n.TP\n\\fBDLCOMM_PROFILES\\fR, \\fBDLCOMM_SYSTEMS\\fR\n"
           "colon\\-separated folders searched first for profile and system names\n"
           ".TP\n\\fBDLCOMM_INJECT\\fR\na fault planted on one rank "
           "(kind:rank[:profile[:factor]]), to see a check fail\n");
    printf(".SH FILES\n.TP\n\\fIPREFIX/share/dlcomm/profiles\\fR, "
           "\\fIPREFIX/share/dlcomm/systems\\fR\n"
           "the shipped profiles and system descriptions, beside \\fIPREFIX/bin/dlcomm\\fR "
           "(\\fBdlcomm profiles\\fR names the folders it searched)\n"
           ".TP\n\\fIPREFIX/share/doc/dlcomm\\fR\nthe documentation: README.md and docs/\n");
    printf(".SH \"SEE ALSO\"\n");
    for (size_t i = 0; i < n; i++)
        if (cmds[i].help)
            printf("\\fBdlcomm\\-%s\\fR(1), ", cmds[i].name);
    printf("\\fBmpirun\\fR(1)\n");
    return 0;
}

/* A page cut short (a full disk under the build) must fail the build. */
static int man_flushed(int code)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        dl_err("stdout: the man page could not be written");
        return 3;
    }
    return code;
}

int dl_man_main(int argc, char **argv, const dl_cmd_t *cmds, size_t n)
{
    if (argc == 1)
        return man_flushed(man_overview(cmds, n));
    for (size_t i = 0; argc == 3 && i < n; i++)
        if (cmds[i].help && strcmp(cmds[i].name, argv[1]) == 0)
            return man_flushed(man_command(&cmds[i], argv[2]));
    dl_err("__man [COMMAND FILE.txt]: COMMAND one of dlcomm's commands, not '%s'",
           argc > 1 ? argv[1] : "");
    return 2;
}
