/* Growing an array by one element: the one copy of the doubling realloc. */
#include <stdlib.h>

#include "util.h"

dl_status_t dl_grow(void **arr, size_t elem, size_t n, size_t *cap, size_t first)
{
    if (n < *cap)
        return DL_OK;
    size_t c = *cap ? 2 * *cap : first;
    void *v = realloc(*arr, c * elem);
    if (!v)
        return DL_ERR_NOMEM;
    *arr = v;
    *cap = c;
    return DL_OK;
}
