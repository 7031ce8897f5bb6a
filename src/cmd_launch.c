/* dlcomm launch: runs a launcher command (mpirun ..., srun ...) and ends
 * with dlcomm's exit code rather than the launcher's (src/sys/launch.h
 * says how the two differ and how the code is found). */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "commands.h"
#include "sys/launch.h"
#include "sys/mpistart.h"
#include "util/util.h"

static const char usage[] =
    "usage: dlcomm launch [--] COMMAND [ARGS...]\n\n"
    "Runs COMMAND (no shell), typically 'mpirun -np 8 dlcomm sweep ...' or 'srun dlcomm\n"
    "preflight', and exits with dlcomm's code: the one rank 0 ended with, where the\n"
    "launcher's differs. Open MPI's mpirun, signalled, exits 1 ('a check failed') although\n"
    "the run was interrupted (3), and 128+S when a rank was killed (3). The first SIGINT,\n"
    "SIGTERM or SIGHUP goes on to COMMAND as SIGUSR2, which mpirun and srun give every rank\n"
    "and dlcomm's ranks take as an interrupt (they record the run and end 3); a second one,\n"
    "or 5 s without an end, goes on as it came; SIGUSR2 (from a launch around this one) is\n"
    "passed on as a first signal.\n"
    "Exit: 0 all good, 1 a check failed, 2 bad usage or COMMAND cannot be started,\n"
    "3 the run broke or was interrupted, or dlcomm never ran under COMMAND on this host.";

static int launch_main(int argc, char **argv)
{
    int first = 1;
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        dl_opts_help(stdout, usage, NULL, 0);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--") == 0)
        first = 2;
    else if (argc > 1 && argv[1][0] == '-') {
        dl_err("launch: unknown option '%s' (the command comes first: dlcomm launch mpirun ...)",
               argv[1]);
        return 2;
    }
    if (first >= argc) {
        dl_err("launch: give the command to run (dlcomm launch mpirun -np 4 dlcomm sweep)");
        return 2;
    }
    if (dl_open_files_check() != DL_OK)
        return 3; /* the launcher and dlcomm under it could not start (mpirun hung) */
    dl_launch_t r;
    dl_launch_run(argv + first, NULL, NULL, &r);
    if (!r.started) {
        dl_err("launch: cannot start %s: %s", argv[first], strerror(r.err));
        return 2;
    }
    char how[128];
    dl_launch_describe(&r, how, sizeof(how));
    int own = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : 128 + WTERMSIG(r.status);
    if (r.watched && !r.ran && r.code == 3)
        dl_err("launch: %s %s, and no dlcomm process started on this host: dlcomm never ran, "
               "the run broke (exit 3)", argv[first], how);
    else if (r.code != own) {
        if (r.noted >= 0)
            dl_err("launch: %s %s; rank 0 ended %d: exit %d", argv[first], how, r.noted, r.code);
        else
            dl_err("launch: %s %s, and rank 0 left no code on this host: exit %d", argv[first],
                   how, r.code);
    }
    return r.code;
}

/* A closed 0-2 is /dev/null for the command too; launch writes no text. */
int cmd_launch(int argc, char **argv) { return dl_stdio_run(launch_main, argc, argv, 0); }
