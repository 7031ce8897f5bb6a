/* The subcommands: one file each (cmd_<name>.c), dispatched by main.c. */
#ifndef DL_COMMANDS_H
#define DL_COMMANDS_H

/* Each returns the process exit code (0 ok, 1 check failed, 2 bad usage or
 * input, 3 the run broke). argv[0] is the subcommand's name. */
int cmd_sweep(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_worker(int argc, char **argv); /* hidden: started by sweep */
int cmd_compare(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_preflight(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_options(int argc, char **argv); /* hidden: the option tables as JSON */
int cmd_tune(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_launch(int argc, char **argv);

#include <stddef.h>
#include "util/util.h"
/* A row of main.c's command table: the name, its entry, and the one line
 * `dlcomm help` gives it (NULL: an internal command, in no list). */
typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} dl_cmd_t;
/* src/cmd_man.c. `dlcomm __man` writes dlcomm(1), the overview of cmds;
 * `dlcomm __man COMMAND FILE` writes dlcomm-COMMAND(1): the usage, FILE's
 * hand-written text and the option table. */
int dl_man_main(int argc, char **argv, const dl_cmd_t *cmds, size_t n);
/* Whether a visible command has an option table (help and version have
 * none), and its --help written in a style (roff, completion's words). */
int dl_cmd_takes_options(const dl_cmd_t *c);
void dl_cmd_help(const dl_cmd_t *c, dl_help_style_t style);

#endif
