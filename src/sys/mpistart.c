/* MPI's start, refused in dlcomm's words where it would fail. Open MPI
 * ends a process whose MPI_Init fails for want of open files with _exit(1),
 * "a check failed" in dlcomm's codes, where nothing ran (and under mpirun
 * with a few more files, the job hung). */
#include "mpistart.h"

#include <stdlib.h>
#include <sys/resource.h>

#include "../util/util.h"
#include "launcher.h"

/* Open files a rank needs to start MPI and run (a lone rank needed 25 to
 * 32, four ranks under mpirun 33 to 48: measured with Open MPI 4.1). */
#define DL_MIN_OPEN_FILES 64

dl_status_t dl_open_files_check(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= DL_MIN_OPEN_FILES)
        return DL_OK;
    if (rl.rlim_max >= DL_MIN_OPEN_FILES) {
        rl.rlim_cur = rl.rlim_max > 1024 ? 1024 : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
            return DL_OK;
    }
    dl_err("at most %llu open files (ulimit -n); MPI and dlcomm need %d: dlcomm did not start, "
           "the run broke", (unsigned long long)rl.rlim_max, DL_MIN_OPEN_FILES);
    return DL_ERR_INTERNAL;
}

/* MPI that carries only dlcomm's own messages, all on one machine, needs
 * no network: Open MPI's ob1 over shared memory serves them as well as any.
 * Its default selection first opens the cm layer's network libraries (PSM,
 * PSM2, OFI), which on Debian's and Ubuntu's Open MPI 4.1 probe for their
 * adapters with 0.1 s sleep loops: MPI_Init took 0.22 s, 0.015 s with ob1.
 * A pml the user chose (mpirun --mca pml, OMPI_MCA_pml) stays; the mpi
 * backend, whose figures are MPI's own, never comes here. */
static void control_pml(void)
{
    if (!getenv("OMPI_MCA_pml") && dl_launcher_one_node())
        setenv("OMPI_MCA_pml", "ob1", 0);
}

dl_status_t dl_mpi_start(int *argc, char ***argv, int control_only)
{
    if (dl_open_files_check() != DL_OK)
        return DL_ERR_INTERNAL; /* main leaves its 3 for `dlcomm launch` */
    if (control_only)
        control_pml();
    int provided;
    /* SINGLE, not FUNNELED: Open MPI 4.1 turns its internal locking on for
     * any level above SINGLE, which made an 8 B all-reduce 25% slower. */
    MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
    return DL_OK;
}
