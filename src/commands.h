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

/* A plan another command measures through sweep's machinery (backend,
 * profiles, watchdog, checks, faults, run.json): tune's training steps. */
#include <stdint.h>
#include "util/util.h"
typedef struct {
    const char *command;   /* the record's command name ("dlcomm tune") */
    const char *usage;     /* its --help text */
    const uint64_t *sizes; /* a step plan (measure.h: DL_STEP_SIZE, 0 between steps) */
    size_t nsizes;
    uint32_t places;       /* bit 0 out of place, bit 1 in place */
    /* Rank 0, after the measurement and before the record's last write:
     * adds to run (a cJSON *) and writes its own files; st: how the
     * measurement ended. Returns its own status. */
    dl_status_t (*finish)(void *arg, void *run, const char *dir, dl_status_t st);
    void *arg;
} dl_sweep_hook_t;
int dl_sweep_main(int argc, char **argv, const dl_sweep_hook_t *hook);

#endif
