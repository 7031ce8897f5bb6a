/* Running a launcher (mpirun, srun, or any command) whose processes are
 * dlcomm's, and ending with dlcomm's exit code instead of the launcher's.
 *
 * Open MPI 4.1's mpirun, signalled itself, sets its own exit code 1 before
 * its ranks hear anything: read as dlcomm's code that says "a check
 * failed", where the run was interrupted (3). A rank killed by a signal
 * gives 128+S. So the launcher is told nothing it cannot get from its own
 * children: rank 0 (which writes the record), when it runs on this host,
 * leaves its exit code in a private file (DLCOMM_LAUNCH_STATUS, inherited
 * through mpirun and srun), and that code is the answer, unless the
 * launcher says worse than "1" (2, 3, a signal, 128+S). Every dlcomm
 * process started under it marks the file too: where none did, dlcomm
 * never ran on this host, and a launcher that failed (Open MPI could not
 * start) or a command that does not name dlcomm (`dlcomm launch false`,
 * `mpirun hostname`) is a run that broke: 3. Where rank 0 left no code but
 * dlcomm ran (rank 0 on another host, or killed), or the command names
 * dlcomm and ended 0, the launcher's code is read as dlcomm's: 0-3 as they
 * are, 1 after a signal as 3, and anything else as 3.
 *
 * Signals: the first SIGINT, SIGTERM or SIGHUP that reaches this process
 * goes to the command as SIGUSR2 (DL_LW_STOP_SIGNAL), which mpirun and srun
 * pass to every rank unchanged and dlcomm's ranks take as an interrupt:
 * they record the run and end 3, and so does the launcher. (The signal
 * itself would make mpirun end the job with its own 1 and SIGKILL a second
 * later, and srun kill the step at once.) A second signal, or 5 s without
 * an end, goes on as it came. With a terminal (this process in its
 * foreground), the command stays in this process group, and a signal the
 * terminal sent to the whole group is not sent again. Without one (a
 * script, timeout(1), a scheduler), the command gets its own group, so a
 * signal to this group reaches it once, through here; if this process
 * dies, the command gets SIGTERM. */
#ifndef DL_SYS_LAUNCH_H
#define DL_SYS_LAUNCH_H

#include <stddef.h>

typedef struct {
    int code;      /* dlcomm's exit code, 0-3 */
    int started;   /* 0: the command could not be started; errno in err */
    int err;
    int status;    /* the command's wait status */
    int signalled; /* the last signal this process got and passed on (0: none) */
    int noted;     /* the worst code rank 0 left; -1: none */
    int watched;   /* the status file was made: ran below means something */
    int ran;       /* a dlcomm process started on this host under the command */
    int names_dlcomm; /* a word of the command is dlcomm (it may run on other hosts) */
} dl_launch_t;

typedef void (*dl_launch_out_fn)(const char *buf, size_t n, void *arg);

/* Runs argv to its end (argv[0] searched in PATH, no shell). out: the
 * command's stdout and stderr come through a pipe, given to out as they
 * arrive; NULL: the command shares this process's. */
void dl_launch_run(char *const argv[], dl_launch_out_fn out, void *arg, dl_launch_t *res);

/* "exited 1 after SIGTERM", "was killed by SIGKILL": how a command that
 * started ended, for messages. */
void dl_launch_describe(const dl_launch_t *res, char *buf, size_t len);

/* A dlcomm process's side: main reads DLCOMM_LAUNCH_STATUS once (public
 * commands only: a worker's codes are its supervisor's business; rank 0
 * only, by the launcher's rank variables), and every exit path leaves its
 * code (async-signal-safe; the worst counts). */
void dl_launch_note_init(void);
void dl_launch_note(int code);

/* The signal to record for sig: for DL_LW_STOP_SIGNAL from `dlcomm
 * launch`, the one it got (SIGINT, SIGTERM, SIGHUP; it leaves it beside the
 * status file for rank 0); else sig itself. Not async-signal-safe. */
int dl_launch_stop_cause(int sig);

#endif
