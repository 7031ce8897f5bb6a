/* NVML, loaded at run time: it ships with the driver, not the toolkit, and
 * a host without a GPU has none. Only the few calls dlcomm needs are
 * declared here, with the types and codes of the NVML API reference. */
#include "sys.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlEnableState_t; /* NVML_FEATURE_DISABLED 0, ENABLED 1 */
typedef struct {
    char busIdLegacy[16]; /* NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE */
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];       /* NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE */
} nvmlPciInfo_t;
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1
#define NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS 0
#define NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR 1
#define NVML_TEMPERATURE_GPU 0
#define NVML_NVLINK_MAX_LINKS 18

typedef struct {
    void *lib;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*driver)(char *, unsigned int);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long *);
    nvmlReturn_t (*retired)(nvmlDevice_t, int, unsigned int *, unsigned long long *);
    nvmlReturn_t (*retired_pending)(nvmlDevice_t, nvmlEnableState_t *);
    nvmlReturn_t (*remapped)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *,
                             unsigned int *);
    nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*gen)(nvmlDevice_t, unsigned int *), (*gen_max)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*width)(nvmlDevice_t, unsigned int *), (*width_max)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned int, nvmlEnableState_t *);
    nvmlReturn_t (*link_remote)(nvmlDevice_t, unsigned int, nvmlPciInfo_t *);
} nvml_t;

#define SYM(f, n) (*(void **)&nv->f = dlsym(nv->lib, n))

static int nvml_load(nvml_t *nv, char *why, size_t len)
{
    memset(nv, 0, sizeof(*nv));
    nv->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nv->lib) {
        snprintf(why, len, "NVML not found (libnvidia-ml.so.1 comes with the NVIDIA driver)");
        return -1;
    }
    /* Required: without these there is nothing to say. */
    if (!SYM(init, "nvmlInit_v2") || !SYM(shutdown, "nvmlShutdown") ||
        !SYM(count, "nvmlDeviceGetCount_v2") || !SYM(handle, "nvmlDeviceGetHandleByIndex_v2") ||
        !SYM(pci, "nvmlDeviceGetPciInfo_v3")) {
        snprintf(why, len, "libnvidia-ml.so.1 lacks nvmlInit_v2 or its device calls (driver too old)");
        dlclose(nv->lib);
        return -1;
    }
    /* Optional: a missing one leaves its figure out. */
    SYM(error_string, "nvmlErrorString");
    SYM(driver, "nvmlSystemGetDriverVersion");
    SYM(name, "nvmlDeviceGetName");
    SYM(ecc, "nvmlDeviceGetTotalEccErrors");
    SYM(retired, "nvmlDeviceGetRetiredPages");
    SYM(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
    SYM(remapped, "nvmlDeviceGetRemappedRows");
    if (!SYM(throttle, "nvmlDeviceGetCurrentClocksEventReasons"))
        SYM(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
    SYM(temp, "nvmlDeviceGetTemperature");
    SYM(gen, "nvmlDeviceGetCurrPcieLinkGeneration");
    SYM(gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
    SYM(width, "nvmlDeviceGetCurrPcieLinkWidth");
    SYM(width_max, "nvmlDeviceGetMaxPcieLinkWidth");
    SYM(link_state, "nvmlDeviceGetNvLinkState");
    SYM(link_remote, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    nvmlReturn_t rc = nv->init();
    if (rc != NVML_SUCCESS) {
        snprintf(why, len, "nvmlInit failed: %s (no GPU or driver not loaded)",
                 nv->error_string ? nv->error_string(rc) : "error");
        dlclose(nv->lib);
        return -1;
    }
    return 0;
}

/* "0000:17:00.0": NVML writes an 8-digit domain, hwloc and sysfs 4. */
static void bus_id(const nvmlPciInfo_t *p, char *out, size_t len)
{
    const char *dot = strrchr(p->busId, '.');
    unsigned fn = dot ? (unsigned)(dot[1] - '0') : 0;
    snprintf(out, len, "%04x:%02x:%02x.%u", p->domain, p->bus, p->device, fn > 7 ? 0 : fn);
}

static void health(const nvml_t *nv, nvmlDevice_t d, dl_gpu_t *g)
{
    g->ecc_volatile = g->ecc_aggregate = -1;
    unsigned long long v;
    if (nv->ecc && nv->ecc(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &v) == 0)
        g->ecc_volatile = (long long)v;
    if (nv->ecc && nv->ecc(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &v) == 0)
        g->ecc_aggregate = (long long)v;
    unsigned n = 0;
    g->retired_dbe = g->retired_pending = -1;
    if (nv->retired && nv->retired(d, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &n, NULL) == 0)
        g->retired_dbe = (int)n;
    nvmlEnableState_t pend;
    if (nv->retired_pending && nv->retired_pending(d, &pend) == 0)
        g->retired_pending = pend != 0;
    unsigned corr, unc, rp, rf;
    g->remap_pending = g->remap_failure = -1;
    if (nv->remapped && nv->remapped(d, &corr, &unc, &rp, &rf) == 0) {
        g->remap_unc = (int)unc;
        g->remap_pending = rp != 0;
        g->remap_failure = rf != 0;
    }
    g->throttle = -1;
    if (nv->throttle && nv->throttle(d, &v) == 0)
        g->throttle = (long long)v;
    unsigned t;
    g->temp_c = -1;
    if (nv->temp && nv->temp(d, NVML_TEMPERATURE_GPU, &t) == 0)
        g->temp_c = (int)t;
    unsigned a = 0, b = 0;
    g->pcie_gen = g->pcie_gen_max = g->pcie_width = g->pcie_width_max = -1;
    if (nv->gen && nv->gen_max && nv->gen(d, &a) == 0 && nv->gen_max(d, &b) == 0)
        g->pcie_gen = (int)a, g->pcie_gen_max = (int)b;
    if (nv->width && nv->width_max && nv->width(d, &a) == 0 && nv->width_max(d, &b) == 0)
        g->pcie_width = (int)a, g->pcie_width_max = (int)b;
}

/* Links NVML calls supported; an inactive one among them is down. */
static void nvlinks(const nvml_t *nv, nvmlDevice_t d, dl_gpu_t *g)
{
    for (unsigned l = 0; nv->link_state && l < NVML_NVLINK_MAX_LINKS; l++) {
        nvmlEnableState_t on;
        if (nv->link_state(d, l, &on) != NVML_SUCCESS)
            continue;
        g->nvlink_total++;
        if (!on)
            continue;
        nvmlPciInfo_t rp;
        if (nv->link_remote && nv->link_remote(d, l, &rp) == NVML_SUCCESS &&
            g->nvlink_up < DL_GPU_MAX_LINKS)
            bus_id(&rp, g->nvlink_peer[g->nvlink_up], sizeof(g->nvlink_peer[0]));
        g->nvlink_up++;
    }
}

dl_status_t dl_sys_gpus(dl_gpus_t *out, char *why, size_t len)
{
    memset(out, 0, sizeof(*out));
    nvml_t nv;
    if (nvml_load(&nv, why, len) != 0)
        return DL_ERR_UNAVAILABLE;
    unsigned n = 0;
    if (nv.driver)
        nv.driver(out->driver, sizeof(out->driver));
    if (nv.count(&n) != NVML_SUCCESS)
        n = 0;
    for (unsigned i = 0; i < n && out->count < DL_GPU_MAX; i++) {
        nvmlDevice_t d;
        nvmlPciInfo_t p;
        if (nv.handle(i, &d) != NVML_SUCCESS || nv.pci(d, &p) != NVML_SUCCESS)
            continue;
        dl_gpu_t *g = &out->gpu[out->count++];
        g->index = (int)i;
        bus_id(&p, g->bus_id, sizeof(g->bus_id));
        if (nv.name)
            nv.name(d, g->name, sizeof(g->name));
        health(&nv, d, g);
        nvlinks(&nv, d, g);
    }
    nv.shutdown();
    dlclose(nv.lib);
    if (out->count == 0) {
        snprintf(why, len, "NVML sees no GPU");
        return DL_ERR_UNAVAILABLE;
    }
    return DL_OK;
}

cJSON *dl_gpu_json(const dl_gpu_t *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", g->index);
    cJSON_AddStringToObject(o, "name", g->name);
    cJSON_AddStringToObject(o, "bus_id", g->bus_id);
    cJSON_AddNumberToObject(o, "ecc_volatile_uncorrected", (double)g->ecc_volatile);
    cJSON_AddNumberToObject(o, "ecc_aggregate_uncorrected", (double)g->ecc_aggregate);
    cJSON_AddNumberToObject(o, "retired_pages_dbe", g->retired_dbe);
    cJSON_AddNumberToObject(o, "retired_pages_pending", g->retired_pending);
    cJSON_AddNumberToObject(o, "remapped_rows_uncorrectable", g->remap_unc);
    cJSON_AddNumberToObject(o, "remapped_rows_pending", g->remap_pending);
    cJSON_AddNumberToObject(o, "remapped_rows_failure", g->remap_failure);
    cJSON_AddNumberToObject(o, "clock_event_reasons", (double)g->throttle);
    cJSON_AddNumberToObject(o, "temperature_c", g->temp_c);
    cJSON_AddNumberToObject(o, "pcie_gen", g->pcie_gen);
    cJSON_AddNumberToObject(o, "pcie_gen_max", g->pcie_gen_max);
    cJSON_AddNumberToObject(o, "pcie_width", g->pcie_width);
    cJSON_AddNumberToObject(o, "pcie_width_max", g->pcie_width_max);
    cJSON_AddNumberToObject(o, "nvlink_total", g->nvlink_total);
    cJSON_AddNumberToObject(o, "nvlink_up", g->nvlink_up);
    return o;
}
