/* The launcher's word on this process's rank and the job's size (launcher.h). */
#include "launcher.h"

#include <stdlib.h>

/* A whole number >= 0 in the variable, or -1. */
static int env_count(const char *const *vars, int n)
{
    for (int i = 0; i < n; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long x = v && *v ? strtol(v, &end, 10) : -1;
        if (v && *v)
            return *end || x < 0 || x > 1 << 30 ? -1 : (int)x;
    }
    return -1;
}

int dl_launcher_rank(void)
{
    /* Slurm's batch step has SLURM_PROCID 0 as well: mpirun inside it
     * names its own ranks first. */
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    return env_count(vars, 4);
}

int dl_launcher_size(void)
{
    /* A step's tasks, not the allocation's (SLURM_NTASKS is also set in
     * the batch script, which is one process). */
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"};
    int n = env_count(vars, 3);
    return n > 0 ? n : 1;
}

int dl_launcher_is_rank0(void)
{
    return dl_launcher_rank() <= 0;
}

/* env_count of one variable. */
static int env_int(const char *var) { return env_count(&var, 1); }

int dl_launcher_one_node(void)
{
    int n = env_int("OMPI_COMM_WORLD_SIZE");
    if (n > 0)
        return env_int("OMPI_COMM_WORLD_LOCAL_SIZE") == n;
    return dl_launcher_rank() < 0 || env_int("SLURM_STEP_NUM_NODES") == 1;
}
