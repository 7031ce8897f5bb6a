/* MPI_Init_thread (SINGLE) for every command that runs MPI, after checking
 * what MPI needs to start at all (open files: ulimit -n). Where it could
 * not, one dlcomm line and non-OK: the
 * caller exits 3 without MPI (dlcomm never ran). */
#ifndef DL_SYS_MPISTART_H
#define DL_SYS_MPISTART_H

#include <mpi.h>

#include "../util/util.h"

/* control_only: MPI carries dlcomm's own messages only (a worker backend's
 * supervisors), not the measured data. */
dl_status_t dl_mpi_start(int *argc, char ***argv, int control_only);
/* Raises the soft limit on open files where the hard one allows; DL_OK
 * when as many as MPI needs may be open, else one line saying so. For
 * `dlcomm launch` too: under too few, mpirun itself hung. */
dl_status_t dl_open_files_check(void);

#endif
