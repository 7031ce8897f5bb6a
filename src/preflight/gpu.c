/* GPU health, judged from NVML's figures (-1: not supported, not judged).
 * FAIL for what needs a reset or a repair before a job (uncorrected ECC
 * errors since boot, pending page retirement or row remapping, a failed
 * remap, hardware slowdown, a PCIe link narrower than it can be, an NVLink
 * down); WARN for history and soft limits (aggregate ECC, retired pages,
 * software thermal capping, temperature, a PCIe generation below the
 * maximum, which idle GPUs do to save power). */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../sys/sys.h"

typedef struct {
    dl_pf_status_t st;
    char msg[512];
    size_t n;
} verdict_t;

static void note(verdict_t *v, dl_pf_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(verdict_t *v, dl_pf_status_t st, const char *fmt, ...)
{
    if (st == DL_PF_FAIL || (st == DL_PF_WARN && v->st == DL_PF_PASS))
        v->st = st;
    va_list ap;
    va_start(ap, fmt);
    if (v->n < sizeof(v->msg) - 2) {
        v->n += (size_t)snprintf(v->msg + v->n, sizeof(v->msg) - v->n, "%s", v->n ? "; " : "");
        if (v->n < sizeof(v->msg))
            v->n += (size_t)vsnprintf(v->msg + v->n, sizeof(v->msg) - v->n, fmt, ap);
    }
    va_end(ap);
}

static double get(const cJSON *g, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void memory(verdict_t *v, const cJSON *g)
{
    if (get(g, "ecc_volatile_uncorrected") > 0)
        note(v, DL_PF_FAIL, "%.0f uncorrected ECC errors since boot", get(g, "ecc_volatile_uncorrected"));
    if (get(g, "ecc_aggregate_uncorrected") > 0)
        note(v, DL_PF_WARN, "%.0f uncorrected ECC errors in its lifetime", get(g, "ecc_aggregate_uncorrected"));
    if (get(g, "retired_pages_pending") > 0)
        note(v, DL_PF_FAIL, "page retirement pending (reset the GPU)");
    if (get(g, "retired_pages_dbe") > 0)
        note(v, DL_PF_WARN, "%.0f pages retired for double-bit errors", get(g, "retired_pages_dbe"));
    if (get(g, "remapped_rows_pending") > 0)
        note(v, DL_PF_FAIL, "row remapping pending (reset the GPU)");
    if (get(g, "remapped_rows_failure") > 0)
        note(v, DL_PF_FAIL, "a row remapping failed (replace the GPU)");
}

static void clocks(verdict_t *v, const cJSON *g, double max_temp)
{
    double r = get(g, "clock_event_reasons");
    if (r > 0) {
        unsigned long long m = (unsigned long long)r;
        if (m & DL_GPU_HW_SLOWDOWN)
            note(v, DL_PF_FAIL, "hardware slowdown");
        if (m & DL_GPU_HW_THERMAL)
            note(v, DL_PF_FAIL, "hardware thermal slowdown");
        if (m & DL_GPU_HW_POWER_BRAKE)
            note(v, DL_PF_FAIL, "power brake slowdown");
        if (m & DL_GPU_SW_THERMAL)
            note(v, DL_PF_WARN, "software thermal slowdown");
    }
    if (get(g, "temperature_c") > max_temp)
        note(v, DL_PF_WARN, "%.0f C (above %.0f C)", get(g, "temperature_c"), max_temp);
}

static void links(verdict_t *v, const cJSON *g)
{
    double w = get(g, "pcie_width"), wm = get(g, "pcie_width_max");
    double gen = get(g, "pcie_gen"), gm = get(g, "pcie_gen_max");
    if (w > 0 && wm > 0 && w < wm)
        note(v, DL_PF_FAIL, "PCIe link x%.0f of x%.0f", w, wm);
    if (gen > 0 && gm > 0 && gen < gm)
        note(v, DL_PF_WARN, "PCIe gen%.0f of gen%.0f (idle GPUs lower it; recheck under load)", gen, gm);
    double up = get(g, "nvlink_up"), total = get(g, "nvlink_total");
    if (total > 0 && up < total)
        note(v, DL_PF_FAIL, "NVLink %.0f of %.0f links up", up, total);
}

dl_status_t pf_gpu_judge(pf_ctx_t *c, int host, const cJSON *hostobj)
{
    const cJSON *gpus = cJSON_GetObjectItem(hostobj, "gpus"), *g;
    const char *name = c->lay.names[host];
    if (!cJSON_GetArraySize(gpus)) {
        pf_check(c, DL_PF_SKIP, "gpu-health", "host", name, NULL, "%s",
                 cJSON_GetObjectItem(hostobj, "nvml")->valuestring);
        return DL_OK;
    }
    cJSON_ArrayForEach(g, gpus)
    {
        verdict_t v = {.st = DL_PF_PASS};
        memory(&v, g);
        clocks(&v, g, c->o->max_temp_c);
        links(&v, g);
        char subject[300];
        int idx = (int)get(g, "index");
        snprintf(subject, sizeof(subject), "%s gpu%d", name, idx);
        if (v.st == DL_PF_PASS)
            snprintf(v.msg, sizeof(v.msg), "no ECC/retirement/remap faults, no slowdown, %.0f C, "
                     "PCIe gen%.0f x%.0f, NVLink %.0f/%.0f up", get(g, "temperature_c"),
                     get(g, "pcie_gen"), get(g, "pcie_width"), get(g, "nvlink_up"),
                     get(g, "nvlink_total"));
        if (v.st == DL_PF_FAIL)
            pf_blame_gpu(c, name, idx, cJSON_GetObjectItem(g, "bus_id")->valuestring);
        pf_check(c, v.st, "gpu-health", "gpu", subject, cJSON_Duplicate(g, 1), "%s %s",
                 cJSON_GetObjectItem(g, "bus_id")->valuestring, v.msg);
    }
    return DL_OK;
}
