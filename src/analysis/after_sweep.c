/* What a sweep does with its run once run.json is written (rank 0 only):
 * charts into the run folder (--plot), the Prometheus file (--prometheus). */
#include "analysis.h"

#include <stdio.h>

dl_status_t dl_an_after_sweep(const char *dir, int plot, const char *prom)
{
    if (!plot && !prom)
        return DL_OK;
    char path[1100];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    dl_run_t r;
    dl_status_t st = dl_an_load(path, &r);
    if (st != DL_OK)
        return st;
    if (prom)
        st = dl_an_prometheus(prom, &r);
    if (plot) {
        dl_run_t *runs[1] = {&r};
        dl_plot_opts_t o = {.outdir = dir, .format = "png"};
        st = dl_status_worse(st, dl_an_plot(runs, 1, &o));
    }
    dl_an_free(&r);
    return st;
}
