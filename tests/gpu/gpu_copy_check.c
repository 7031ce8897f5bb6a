/* preflight's copy checks alone, without MPI: every visible GPU in turn (as
 * local ranks 0..n-1 of one host would measure them), each figure judged
 * and printed as preflight prints it, the checks written as JSON.
 * Exits 0 (pass or warn), 1 (a figure failed), 77 (no GPU here: skipped).
 * Usage: gpu_copy_check [SYSTEM.json|-] [OUT.json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preflight/gpucopy.h"
#include "preflight/internal.h"

int main(int argc, char **argv)
{
    const char *system = argc > 1 && strcmp(argv[1], "-") ? argv[1] : NULL;
    dl_system_t desc;
    dl_gc_system_t sys;
    if (system && dl_system_load("SYSTEM", system, &desc) != DL_OK)
        return 2;
    dl_gc_system_from(system ? &desc : NULL, &sys);
    dl_gpus_t *g = calloc(1, sizeof(*g));
    char why[256];
    int have = g && dl_sys_gpus(g, why, sizeof(why)) == DL_OK;
    enum { MAX = DL_GPU_MAX };
    dl_pf_opts_t o = {.gpu_checks = 1, .system = system ? &desc : NULL};
    char names[1][256] = {""};
    int host_of[MAX] = {0}, local_of[MAX];
    dl_host_info_t hi;
    dl_sys_host_info(&hi);
    snprintf(names[0], sizeof(names[0]), "%s", hi.host);
    pf_ctx_t c = {.o = &o, .lay = {.nranks = MAX, .nhosts = 1, .max_local = MAX, .host_of = host_of,
                                   .local_of = local_of, .names = names}};
    cJSON *doc = cJSON_CreateObject();
    c.doc = doc;
    c.checks = cJSON_AddArrayToObject(doc, "checks");
    c.v_gpus = cJSON_AddArrayToObject(doc, "gpus_at_fault");
    char skipped[1] = {0};
    int measured = 0;
    char first[32] = "";
    for (int d = 0; d < MAX; d++) {
        char bus[32] = "", why2[256];
        int dev;
        dl_status_t st = dl_gc_device(d, &dev, bus, sizeof(bus), why2, sizeof(why2));
        if (d > 0 && (st != DL_OK || !strcmp(bus, first)))
            break; /* device d is device 0 again: every GPU is done */
        if (d == 0)
            snprintf(first, sizeof(first), "%s", bus);
        local_of[d] = d;
        c.rank = d;
        cJSON *e = pf_gpu_copy_mine(&c, have ? g : NULL, -1);
        measured += !strcmp(cJSON_GetObjectItem(e, "outcome")->valuestring, "measured");
        c.rank = 0; /* judged as rank 0 judges a gathered record */
        pf_gpu_copy_judge(&c, &sys, e, skipped);
        cJSON_Delete(e);
        if (st != DL_OK)
            break;
    }
    cJSON_AddNumberToObject(doc, "gpus_measured", measured);
    if (argc > 2) {
        char *s = cJSON_Print(doc);
        FILE *f = fopen(argv[2], "w");
        if (!f || fputs(s, f) < 0) {
            fprintf(stderr, "gpu_copy_check: cannot write %s\n", argv[2]);
            return 2;
        }
        fclose(f);
        cJSON_free(s);
    }
    int failed = c.nfail > 0;
    printf("%d GPU(s) measured: %d pass, %d warn, %d fail, %d skip\n", measured, c.npass, c.nwarn,
           c.nfail, c.nskip);
    cJSON_Delete(doc);
    free(g);
    return measured == 0 && !failed ? 77 : failed;
}
