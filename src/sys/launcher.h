/* Which rank this process is, as the launcher that started it says in its
 * environment (mpirun, srun, any PMI), before MPI is up: commands check
 * their options first, and only rank 0 speaks for a job. One copy, for
 * every command and for `dlcomm launch`'s note. */
#ifndef DL_SYS_LAUNCHER_H
#define DL_SYS_LAUNCHER_H

/* The rank (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID: the
 * first set), or -1 when no launcher started this process. */
int dl_launcher_rank(void);
/* The ranks of the job (OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_STEP_NUM_TASKS:
 * the first set), or 1 when none says: a process of its own. */
int dl_launcher_size(void);
/* Rank 0, or a process no launcher started. */
int dl_launcher_is_rank0(void);
/* 1 when every rank of the job is on this machine, as the launcher says:
 * Open MPI's local size equal to its size, a Slurm step of one node, or a
 * process no launcher started; 0 when it says otherwise or nothing. */
int dl_launcher_one_node(void);

#endif
