/* The one watchdog of a job whose ranks measure themselves (sweep on mpi,
 * preflight): a thread that ends the whole job with exit 3 when a step
 * makes no progress for the timeout, when this rank failed and its peers
 * cannot finish (after a grace), or (if asked) when a signal arrived: the
 * main thread may sit in a collective that never returns. The command's
 * on_expire says why and writes what must survive, then the watchdog
 * aborts the job (MPI_Abort, _exit(3)). One per process. */
#ifndef DL_SYS_WATCHDOG_H
#define DL_SYS_WATCHDOG_H

typedef enum {
    DL_WD_TIMEOUT, /* the step ran past the timeout */
    DL_WD_FAILED,  /* dl_watchdog_failed() was called, and the grace passed */
    DL_WD_SIGNAL,  /* signalled() returned a signal */
} dl_wd_why_t;

/* On the watchdog's thread, once the job is to end. step: the last
 * dl_watchdog_step's name; sig: the signal (DL_WD_SIGNAL). Returns how many
 * seconds to wait before the abort (rank 0 writing first), or < 0 to go on
 * watching (the run is already finishing on its own). */
typedef double (*dl_wd_expire_fn)(void *arg, dl_wd_why_t why, int sig, const char *step);

typedef struct {
    double timeout_s;
    double fail_grace_s;   /* DL_WD_FAILED: how long after the failure */
    int (*signalled)(void); /* NULL: signals are the command's own business */
    dl_wd_expire_fn on_expire;
    void *arg;
} dl_watchdog_cfg_t;

/* Starts the thread. A thread that cannot start is said (one line) and the
 * process exits 3: a job must never run unwatched. */
void dl_watchdog_start(const dl_watchdog_cfg_t *cfg);
/* This rank cannot go on (no memory, no thread) where its peers wait on
 * it: what as one line (NULL: already said), and the job ends with exit 3
 * (MPI_Abort), never a crash. */
void dl_watchdog_abort(const char *what) __attribute__((noreturn));
/* Progress: a step named `name` (NULL: the same step) starts now. */
void dl_watchdog_step(const char *name);
/* No step is running: nothing can time out (the run is over). */
void dl_watchdog_idle(void);
/* This rank's own part failed: the job ends after cfg->fail_grace_s unless
 * dl_watchdog_idle() comes first (every rank agreed). */
void dl_watchdog_failed(void);
double dl_watchdog_timeout(void);

#endif
