/* Cross-rank reductions between batches, for ranks that are MPI processes. */
#include "measure.h"

#include <mpi.h>

static dl_status_t rc_status(int rc) { return rc == MPI_SUCCESS ? DL_OK : DL_ERR_COMM; }

static dl_status_t max_doubles(void *arg, double *v, size_t n)
{
    return rc_status(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_MAX, *(MPI_Comm *)arg));
}

static dl_status_t sum_u64(void *arg, uint64_t *v, size_t n)
{
    return rc_status(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_SUM, *(MPI_Comm *)arg));
}

static dl_status_t gather_double(void *arg, double v, double *out)
{
    return rc_status(MPI_Gather(&v, 1, MPI_DOUBLE, out, 1, MPI_DOUBLE, 0, *(MPI_Comm *)arg));
}

static dl_status_t bcast(void *arg, void *buf, size_t len)
{
    return rc_status(MPI_Bcast(buf, (int)len, MPI_BYTE, 0, *(MPI_Comm *)arg));
}

void dl_xcomm_mpi_init(dl_xcomm_t *x, void *mpi_comm)
{
    MPI_Comm c = *(MPI_Comm *)mpi_comm;
    x->max_doubles = max_doubles;
    x->sum_u64 = sum_u64;
    x->gather_double = gather_double;
    x->bcast = bcast;
    x->arg = mpi_comm;
    x->mpi_comm = mpi_comm;
    x->local_failure = NULL;
    x->all = NULL;
    x->group = 0;
    x->groups = 1;
    MPI_Comm_rank(c, &x->rank);
    MPI_Comm_size(c, &x->nranks);
}
