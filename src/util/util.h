/*
 * util: what every other part of dlcomm leans on and nothing else provides:
 * the one status type (and its exit codes), logging, size parsing, string
 * lists, statistics over samples, atomic file writes and the declarative
 * option table. Depends on libc, and on cJSON for the options' JSON echo.
 */
#ifndef DL_UTIL_H
#define DL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One status for the whole program. Each maps to a documented exit code. */
typedef enum {
    DL_OK = 0,
    DL_ERR_USAGE,       /* bad option or value: exit 2 */
    DL_ERR_INPUT,       /* bad input file: exit 2 */
    DL_ERR_UNAVAILABLE, /* asked-for backend/tool not present here: exit 2 */
    DL_ERR_IO,          /* an output place unusable before the work: exit 2 */
    DL_ERR_CHECK,       /* wrong data, regression, failed check: exit 1 */
    DL_ERR_COMM,        /* communication failure: exit 3 */
    DL_ERR_TIMEOUT,     /* deadline passed: exit 3 */
    DL_ERR_CRASH,       /* a worker died: exit 3 */
    DL_ERR_NOMEM,       /* allocation failed: exit 3 */
    DL_ERR_INTERNAL,    /* anything else that broke the run: exit 3 */
    DL_ERR_WRITE,       /* a result could not be written once made (disk full): exit 3 */
    DL_STATUS_COUNT
} dl_status_t;

const char *dl_status_str(dl_status_t st);
int dl_status_exit_code(dl_status_t st);
/* The worse of two statuses by exit code (3 > 2 > 1 > 0). */
dl_status_t dl_status_worse(dl_status_t a, dl_status_t b);

/* Runs a command's fn with stdin/stdout/stderr made safe (a closed one is
 * /dev/null, SIGPIPE ignored), then checks stdout: lost output is one line
 * on stderr and exit 3, or only a warning when the command's record is in
 * files it wrote whole (sweep, tune). */
int dl_stdio_run(int (*fn)(int, char **), int argc, char **argv, int files_hold_the_record);

/* Logging: one line on stderr, prefixed "dlcomm: ". */
void dl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void dl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void dl_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void dl_log_set_quiet(int quiet); /* drops info lines */
void dl_log_set_mute(int mute);   /* drops every line (ranks other than 0) */
/* Lines say what they are about after the level ("--sweep: ..."); NULL ends it. */
void dl_log_set_context(const char *what);

/* Sizes: "8", "64K", "1M", "4G", "1.5K" (binary units, B suffix allowed). */
dl_status_t dl_size_parse(const char *s, uint64_t *out);
/* "8 B", "64 KiB", "1 MiB", "4 GiB" (exact powers shown without decimals). */
void dl_size_format(uint64_t bytes, char *buf, size_t len);

/* Sizes from min..max by factor (>1) or step (>0; factor ignored when step set). */
typedef struct {
    uint64_t *v;
    size_t n;
} dl_sizes_t;
/* The most sizes one sweep takes: a step that small is a typo, not a sweep. */
#define DL_SIZES_MAX 100000
dl_status_t dl_sizes_build(uint64_t min, uint64_t max, double factor, uint64_t step,
                           dl_sizes_t *out);
void dl_sizes_free(dl_sizes_t *s);

/* The values an option may take (fio's posval): names[i] is value i; an
 * alias is another spelling of a name (nccl-tests' "float" for float32).
 * One list drives the parse, the error line, --help, the man page and
 * completion. */
typedef struct {
    const char *noun;            /* one value, for messages: "collective" */
    const char *const *names;    /* the canonical spellings, in order */
    int n;
    const char *const *aliases;  /* pairs {spelling, name}, NULL-ended; or NULL */
    const char *aliases_from;    /* whose spellings those are ("nccl-tests'"), or NULL */
    const char *note;            /* said after an unknown value (what else to try), or NULL */
} dl_choices_t;
/* The value a word names (an alias resolved), or -1. */
int dl_choices_find(const dl_choices_t *c, const char *word);
/* The names as a sentence: "a, b or c". */
void dl_choices_text(const dl_choices_t *c, char *buf, size_t len);
/* The one line for a word that is none of them, naming option --opt and
 * the closest name ("did you mean"); list: the word was one of a list. */
void dl_choices_unknown(const dl_choices_t *c, const char *opt, const char *word, int list);
/* A comma list of names (or "all"): mask bit i = names[i]. An unknown or
 * empty list: one line naming --opt, DL_ERR_USAGE. */
dl_status_t dl_choices_mask(const dl_choices_t *c, const char *opt, const char *s, uint32_t *mask);
/* The names of a mask's bits, comma-separated (the echo of a list). */
void dl_choices_mask_text(const dl_choices_t *c, uint32_t mask, char *buf, size_t len);

/* "Did you mean": the name closest to word by edit distance (a swap of
 * neighbours is one edit), if it is close enough to be a typo; else NULL.
 * NULL entries of names are skipped. */
const char *dl_suggest(const char *word, const char *const *names, size_t n);
/* Appends " (did you mean 'x'?)" to buf when dl_suggest finds one. */
void dl_suggest_append(char *buf, size_t len, const char *word, const char *const *names,
                       size_t n);

/* Statistics over samples (seconds or any unit). */
typedef struct {
    size_t n;
    double mean, stdev, min, max, p50, p95, p99;
    double ci95; /* half-width of the 95% confidence interval of the mean */
} dl_stats_t;
/* Sorts a copy; samples untouched. */
dl_status_t dl_stats_compute(const double *samples, size_t n, dl_stats_t *out);
/* Mean and spread kept as samples arrive (Welford), for stop rules that
 * must not re-read every sample after each batch. */
typedef struct {
    size_t n;
    double mean, m2;
} dl_running_t;
void dl_running_add(dl_running_t *r, const double *v, size_t n);
double dl_running_stdev(const dl_running_t *r);
/* Half-width of the 95% confidence interval of the mean (inf below 2 samples). */
double dl_running_ci95(const dl_running_t *r);
/* Two-sided 95% Student t critical value for df degrees of freedom. */
double dl_t95(size_t df);
/* Median and median absolute deviation (scaled by 1.4826 to estimate sigma). */
double dl_median(const double *v, size_t n);
/* The q quantile (0..1), interpolated between the closest ranks; NAN for none. */
double dl_quantile(const double *v, size_t n, double q);
double dl_mad(const double *v, size_t n, double median);

/* Files. Atomic write: data goes to DIR/.name.XXXXXX (mkstemp: an
 * unguessable name created with O_EXCL) then is renamed. */
dl_status_t dl_mkdir_p(const char *path);
dl_status_t dl_write_atomic(const char *path, const void *data, size_t len);
/* A folder this run writes files into by name (worker logs): made here, or
 * there already as a real folder, not a link, that the caller owns and no
 * one else may write. Else one line naming it and DL_ERR_USAGE (exit 2).
 * dfd (may be NULL): the folder opened, for dl_create_in. */
dl_status_t dl_dir_private(const char *path, int *dfd);
/* DIR/name (dfd: DIR opened by dl_dir_private) made new for writing: an
 * earlier one unlinked, then O_CREAT|O_EXCL|O_NOFOLLOW. One line on failure. */
dl_status_t dl_create_in(int dfd, const char *dir, const char *name, int *fd);
/* A lock file (flock) opened or made: never through a link, and only a
 * regular file of one name (a hard link to another file would be written
 * to). -1 with errno: EMLINK for a file of several names, EINVAL for one
 * not regular. */
int dl_open_lock(const char *path);
/* Reads a whole regular file of at most DL_READ_MAX bytes (NUL-terminated;
 * caller frees). A FIFO, device, folder or larger file: DL_ERR_INPUT at
 * once, never a block; dl_read_error() says why, for the caller's line. */
#define DL_READ_MAX (256ull << 20)
dl_status_t dl_read_file(const char *path, char **data, size_t *len);

/* Room for element n of arr (git's ALLOC_GROW): cap doubles, from first;
 * DL_ERR_NOMEM, with arr and cap as they were, when it cannot. */
dl_status_t dl_grow(void **arr, size_t elem, size_t n, size_t *cap, size_t first);
#define DL_GROW(arr, n, cap, first) dl_grow((void **)&(arr), sizeof(*(arr)), (n), &(cap), (first))
const char *dl_read_error(void);
/* cJSON * of a text that is exactly one JSON document (white space around
 * it allowed), else NULL: trailing garbage, a second document or a NUL. */
void *dl_json_parse_whole(const char *buf, size_t len);
dl_status_t dl_dir_writable(const char *path);
/* Why no CUDA GPU can be used, in words a person acts on: without the
 * NVIDIA kernel driver (no /proc/driver/nvidia/version) CUDA reports "driver
 * version is insufficient", which reads as an upgrade to make; that case
 * says the driver is absent. cuda_words: CUDA's own error string. */
const char *dl_no_gpu_why(const char *cuda_words, char *buf, size_t len);
/* An output file named by option opt ("--json"), checked before any work:
 * not a folder, link or special file, its folder writable. One line. */
dl_status_t dl_out_file_check(const char *opt, const char *path);

/* Declarative options: one table drives parsing, --help, the man page,
 * completion and the JSON echo. A row with choices knows its values: STR
 * (the field points at the canonical name), ENUM (an int, the name's
 * index) or LIST (a comma list or "all": a uint32_t mask). */
typedef enum {
    DL_OPT_FLAG,
    DL_OPT_STR,
    DL_OPT_INT,
    DL_OPT_DOUBLE,
    DL_OPT_SIZE,
    DL_OPT_ENUM,
    DL_OPT_LIST,
} dl_opt_kind_t;

/* Row flags. FIXED: the command running this one's table (watch running
 * sweep, tune composing sweep's options) sets it itself; its help then
 * says who, the user may not give it, and --help and completion leave it
 * out. */
enum { DL_OPT_FIXED = 1u << 0 };

typedef struct dl_opt {
    const char *longname; /* "begin" -> --begin */
    char shortname;       /* 'b' -> -b, 0 for none */
    dl_opt_kind_t kind;
    const char *def;      /* default as text, NULL for none */
    const char *metavar;  /* "SIZE" */
    const char *help;     /* FIXED: who sets it ("set by watch: the run's folder") */
    size_t offset;        /* into the target struct */
    /* Optional extra validation of the parsed value; returns a message or NULL. */
    const char *(*validate)(const void *field);
    const dl_choices_t *choices; /* the values (ENUM and LIST need them; STR may have them) */
    unsigned flags;              /* DL_OPT_FIXED */
} dl_opt_t;

/* The range an INT option accepts: 0 .. INT_MAX, as every INT option is a
 * count or a rank that becomes an int. Checked on the wide value before
 * the validator, so nothing is truncated; out of range is one line naming
 * the option and the range, DL_ERR_USAGE. */
void dl_opt_range(const dl_opt_t *o, long *min, long *max);

/* Validators shared by the option tables: a DOUBLE field > 0, a LONG >= 0. */
const char *dl_opt_positive(const void *field);
const char *dl_opt_nonneg_long(const void *field);
/* A DOUBLE percentage in [0, 100) (compare's and watch's --threshold). */
const char *dl_opt_percent(const void *field);

/* Fields by kind: FLAG int, STR char* (points into argv or def, or at the
 * choice's name), INT long, DOUBLE double, SIZE uint64_t, ENUM int, LIST
 * uint32_t. Defaults are applied first. Positional
 * arguments are collected into pos (up to maxpos). Unknown flags, missing
 * values, and bad numbers: one line on stderr, DL_ERR_USAGE. */
dl_status_t dl_opts_parse(const dl_opt_t *opts, size_t nopts, void *target, int argc,
                          char **argv, char **pos, int maxpos, int *npos, int *want_help);
void dl_opts_help(FILE *f, const char *usage, const dl_opt_t *opts, size_t nopts);
/* How dl_opts_help writes every command's table: --help text, a man page
 * section (roff; `dlcomm __man` builds dlcomm.1 from it), the option
 * words alone (`dlcomm __complete`, bash completion), or the values one
 * option takes (its choices, one a line; set by dl_opts_help_values). */
typedef enum { DL_HELP_TEXT, DL_HELP_ROFF, DL_HELP_WORDS, DL_HELP_VALUES } dl_help_style_t;
void dl_opts_help_style(dl_help_style_t style);
/* DL_HELP_VALUES for the option spelt word ("--datatype", "-d"). */
void dl_opts_help_values(const char *word);
/* The row spelt name: "datatype", "--datatype" or "-d"; NULL if none. */
const dl_opt_t *dl_opt_find(const dl_opt_t *opts, size_t nopts, const char *name);
/* The defaults of every row into target (as a parse of no arguments). */
dl_status_t dl_opts_defaults(const dl_opt_t *opts, size_t nopts, void *target);
/* The first row whose value in target is not its default (given on the
 * command line, in effect), or NULL. */
const dl_opt_t *dl_opts_first_given(const dl_opt_t *opts, size_t nopts, const void *target);
/* Every row of to that from also has (the same name and kind) takes from's
 * value: one option shared by a command and a plug-in's table. */
void dl_opts_share(const dl_opt_t *from, size_t nfrom, const void *from_target,
                   const dl_opt_t *to, size_t nto, void *to_target);
/* One row's value from text, as the command line would give it (checked,
 * validated); a bad value: one line naming the option, DL_ERR_USAGE. */
dl_status_t dl_opt_assign(const dl_opt_t *o, void *target, const char *value);
/* n bytes of s as roff text (escapes, break points, no newline). */
void dl_roff_line(FILE *f, const char *s, size_t n);
/* Roff that the roff style places after a command's usage text, before its
 * options: the man page's hand-written description (src/cmd_man.c). */
void dl_opts_man_description(const char *roff);
/* A command's parse: -1 to go on, else its exit code (0 after printing the
 * help for -h, 2 on bad input, the line already written). */
int dl_opts_command(const dl_opt_t *opts, size_t nopts, void *target, int argc, char **argv,
                    char **pos, int maxpos, int *npos, const char *usage);
/* Adds each option's effective value to a cJSON object (cJSON *); a FIXED row
 * is not this command's to echo. */
void dl_opts_echo(const dl_opt_t *opts, size_t nopts, const void *target, void *json_obj);

/* The inverse of the echo (options carried to a worker as JSON); strings
 * point into json_obj. DL_ERR_INTERNAL when a key is missing or mistyped. */
dl_status_t dl_opts_load_json(const dl_opt_t *opts, size_t nopts, void *target,
                              const void *json_obj);

/* One command line for a command's table and those of its plug-ins (each
 * backend's options): the rows joined, each plug-in's struct placed in one
 * target after the command's (its offset[k]), so one parse, one --help
 * and one echo serve all. The command's struct is at target + 0. */
typedef struct {
    dl_opt_t *opts;
    size_t n;
    size_t *offset; /* [nsets] where plug-in k's struct starts in target */
    void *target;
} dl_optset_t;
dl_status_t dl_optset_init(dl_optset_t *s, const dl_opt_t *base, size_t nbase, size_t base_size,
                           const dl_opt_t *const *extra, const size_t *nextra,
                           const size_t *extra_size, size_t nsets);
void dl_optset_free(dl_optset_t *s);
/* Marks the set's row called name FIXED, its help saying who sets it
 * ("set by watch: ...": the user's try reads "--out is set by watch: ...");
 * DL_ERR_INTERNAL when the set has no such row. */
dl_status_t dl_optset_fix(dl_optset_t *s, const char *name, const char *why);

/* A command's table made known to `dlcomm __options` and to a command
 * that runs this one (watch runs sweep and preflight), with the size of
 * its struct; plugins: the command's line has the backends' rows too. */
typedef struct {
    const char *cmd;
    const dl_opt_t *opts;
    size_t n, size;
    int plugins;
} dl_opt_table_t;
void dl_opt_tables_add(const dl_opt_table_t *t);
const dl_opt_table_t *dl_opt_table_find(const char *cmd);
const dl_opt_table_t *dl_opt_table_at(size_t i); /* NULL past the last */
#define DL_OPTS_EXPORT_(cmd, table, type, plugins)                                          \
    __attribute__((constructor)) static void dl_export_##table(void)                        \
    {                                                                                       \
        static const dl_opt_table_t t = {cmd, table, DL_ARRAY_SIZE(table), sizeof(type),    \
                                         plugins};                                          \
        dl_opt_tables_add(&t);                                                              \
    }
#define DL_OPTS_EXPORT(cmd, table, type) DL_OPTS_EXPORT_(cmd, table, type, 0)
/* A command whose line also carries every backend's options (sweep). */
#define DL_OPTS_EXPORT_PLUGINS(cmd, table, type) DL_OPTS_EXPORT_(cmd, table, type, 1)

/* UTF-8 (src/util/utf8.c): valid means no stray, overlong or surrogate
 * bytes. dl_utf8_fix returns a copy (malloc) with each byte that is not
 * part of a valid sequence replaced by repl. */
int dl_utf8_valid(const char *s);
char *dl_utf8_fix(const char *s, const char *repl);

/* Data folders: $ENVVAR (colon-separated) first; for a dlcomm in its build
 * tree, the source tree's topologies/SUB; <exe dir>/../share/dlcomm/SUB and
 * the install prefix's <datadir>/dlcomm/SUB (compiled in); then
 * <exe dir>/../topologies/SUB and <exe dir>/../../topologies/SUB. Existing
 * folders only, each once. Returns the count filled. */
int dl_data_dirs(const char *envvar, const char *sub, char dirs[][1024], int max);
/* NAME (no slash, no .json) searched in those folders as NAME.json; a path as is. */
dl_status_t dl_data_find(const char *envvar, const char *sub, const char *name, char *path,
                         size_t len);
/* The names (NAME of NAME.json) in those folders, each once, sorted;
 * returns the count (at most max), names[i] of 64 bytes. */
int dl_data_names(const char *envvar, const char *sub, char names[][64], int max);
/* The name in those folders closest to a mistyped one ("did you mean"),
 * into out; NULL when none is close. */
const char *dl_data_suggest(const char *envvar, const char *sub, const char *word, char *out,
                            size_t len);

/* Monotonic wall clock in seconds. */
double dl_now(void);

#define DL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
