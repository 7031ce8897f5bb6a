/* The backends this build has, in the order `--backend auto` tries them. */
#include "backends.h"

#include <string.h>

extern const dl_backend_ops_t dl_backend_mpi;
#ifdef DL_HAVE_NCCL
extern const dl_backend_ops_t dl_backend_nccl;
#endif
#ifdef DL_HAVE_SIM
extern const dl_backend_ops_t dl_backend_sim;
#endif

const dl_backend_ops_t *const dl_backends[] = {
#ifdef DL_HAVE_NCCL
    &dl_backend_nccl,
#endif
    &dl_backend_mpi,
#ifdef DL_HAVE_SIM
    &dl_backend_sim,
#endif
};
const size_t dl_backend_count = DL_ARRAY_SIZE(dl_backends);

const dl_backend_ops_t *dl_backend_find(const char *name)
{
    for (size_t i = 0; i < dl_backend_count; i++)
        if (strcmp(dl_backends[i]->name, name) == 0)
            return dl_backends[i];
    return NULL;
}
