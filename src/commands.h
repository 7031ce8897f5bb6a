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

#endif
