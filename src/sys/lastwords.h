/* How each rank of a sweep ended, when it did not end normally: a small
 * table shared by the ranks of rank 0's host (a file in the run folder,
 * mapped by each, unlinked at once), where a rank leaves the signal it
 * caught before it goes. Rank 0, interrupted or left without a peer, reads
 * it to name the rank, its host and the signal; a rank of its host that is
 * gone without leaving one was killed by SIGKILL, the one signal no process
 * can catch. Ranks of other hosts say it on their own stderr. */
#ifndef DL_SYS_LASTWORDS_H
#define DL_SYS_LASTWORDS_H

#include <mpi.h>

#include <cjson/cJSON.h>

#include "../util/util.h"

/* Slot states besides a caught signal (> 0). */
#define DL_LW_RUNNING 0
#define DL_LW_FAILED (-1)  /* its own call failed: it ended the job and said why */
#define DL_LW_TIMEOUT (-2) /* no progress for --timeout: it ended the job and said why */

/* Collective over comm: rank 0 makes DIR/.dlcomm.ranks, every rank of its
 * host maps it, rank 0 unlinks it. Also sets up the fatal-signal handlers
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT): the rank says
 * "rank R (host H): killed by SIGX", leaves it in its slot, and dies of it. */
void dl_lw_open(MPI_Comm comm, const char *dir, int rank, int nranks, const char *host);

/* Async-signal-safe: this rank caught sig (> 0), or ends on its own
 * (DL_LW_FAILED, DL_LW_TIMEOUT). */
void dl_lw_note(int state);

/* Open MPI 4.1's mpirun, once it is ending the job, kills every rank at
 * once when one exits: a rank other than 0 ending after a signal or a lost
 * peer first waits until rank 0 says the record is written
 * (dl_lw_recorded), at most max_s (a rank of another host: max_s). */
void dl_lw_recorded(void);
void dl_lw_wait_recorded(double max_s);

/* "SIGTERM" for 15 (async-signal-safe, static text). */
const char *dl_lw_signame(int sig);

/* Rank 0: the ranks that were killed (a fatal signal in their slot, or
 * gone from this host without a word) are added to the profile's
 * "failures" [{rank, host, pid, kind "killed", signal, reason}] (with
 * "inferred": true for SIGKILL), to "failed_ranks", and said on stderr;
 * the profile's status becomes "crashed" and its reason names the first.
 * A rank that ended the job itself (DL_LW_FAILED/TIMEOUT, having said why)
 * is added as kind "error"/"timeout", the status following it unless one
 * was killed. hosts: nranks names of 256 chars (dl_sys_fingerprint).
 * Returns how many ranks were added. */
int dl_lw_record(cJSON *profile, const char *hosts, int nranks);

/* How `dlcomm launch` asks the ranks to stop and record: mpirun and srun
 * pass SIGUSR2 on to every rank as it is, where a SIGTERM to them ends the
 * job their own way (mpirun: its code 1, SIGKILL a second later; srun: the
 * step killed at once). Every dlcomm process takes it as it takes SIGTERM. */
#include <signal.h>
#define DL_LW_STOP_SIGNAL SIGUSR2

/* SIGINT/SIGTERM/SIGUSR2: the handler notes the signal and wakes a thread, which
 * calls cb(sig, arg) once (it may take locks, write files, _exit). For a
 * process whose main thread may sit in an MPI call that never returns. */
/* Its thread not started (no memory, a thread limit): one line, and
 * DL_ERR_INTERNAL; the signals keep their default. */
dl_status_t dl_lw_on_interrupt(void (*cb)(int sig, void *arg), void *arg);

#endif
