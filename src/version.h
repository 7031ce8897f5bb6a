/* What this dlcomm is: its version, the libraries it was built against and
 * those it finds at run time, and its backends (src/sys/versions.c). */
#ifndef DL_VERSION_H
#define DL_VERSION_H

#include <stdio.h>

/* "0.1.0" or, built from git, `git describe` at configure time. */
const char *dl_version(void);
/* {"dlcomm", "backends": [...], "built_with": {mpi, nccl, cuda},
 * "runtime": {mpi, nccl, cuda_runtime, cuda_driver}}; a library this build
 * does not use is absent, one it cannot find at run time is null. Callable
 * before MPI_Init and on a host without a GPU (no message, no failure).
 * Returns a cJSON * (void * keeps cJSON out of this header). */
void *dl_versions_json(void);
/* The same as text, one fact a line. */
void dl_versions_print(FILE *f);

#endif
