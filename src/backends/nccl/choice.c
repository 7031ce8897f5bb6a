/* What NCCL chose for a row's checked call, through dlcomm's profiler
 * plugin (profiler/choice_plugin.c). The plugin is loaded here before the
 * communicator exists, and NCCL_PROFILER_PLUGIN names the same file, so
 * NCCL's own dlopen returns this copy and both sides share its state. It
 * is armed around the checked call alone: the timed calls run with NCCL's
 * event mask at 0. Off when the user names another plugin in
 * NCCL_PROFILER_PLUGIN (theirs is kept), or DLCOMM_NCCL_CHOICE=0. */
#include <dlfcn.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl.h"

#define PLUGIN_FILE "libdlcomm-nccl-profiler.so"

static struct {
    int (*arm)(int on);
    int (*take)(char *algo, size_t alen, char *proto, size_t plen, int *nch);
    char path[PATH_MAX];
    char why[256]; /* off: why */
} g;

/* The plugin beside the program (a build tree), or in its installed place. */
static int find_plugin(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    const char *dir = dirname(exe);
    const char *const where[] = {"%s/" PLUGIN_FILE, "%s/../" DL_INSTALL_LIBDIR "/dlcomm/" PLUGIN_FILE};
    for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
        snprintf(out, len, where[i], dir);
        if (access(out, R_OK) == 0)
            return 1;
    }
    return 0;
}

void nccl_choice_setup(void)
{
    const char *off = getenv("DLCOMM_NCCL_CHOICE"), *theirs = getenv("NCCL_PROFILER_PLUGIN");
    if (g.arm || g.why[0])
        return; /* once a process */
    if (off && strcmp(off, "0") == 0) {
        snprintf(g.why, sizeof(g.why), "not read (DLCOMM_NCCL_CHOICE=0)");
        return;
    }
    if (theirs && *theirs) {
        snprintf(g.why, sizeof(g.why), "not read: NCCL_PROFILER_PLUGIN names another plugin (%.160s)",
                 theirs);
        return;
    }
    if (!find_plugin(g.path, sizeof(g.path))) {
        snprintf(g.why, sizeof(g.why), "not read: %s is not installed beside dlcomm", PLUGIN_FILE);
        return;
    }
    void *h = dlopen(g.path, RTLD_NOW | RTLD_LOCAL);
    g.arm = h ? (int (*)(int))dlsym(h, "dlcomm_choice_arm") : NULL;
    g.take = h ? (int (*)(char *, size_t, char *, size_t, int *))dlsym(h, "dlcomm_choice_take") : NULL;
    if (!g.arm || !g.take || setenv("NCCL_PROFILER_PLUGIN", g.path, 1) != 0) {
        snprintf(g.why, sizeof(g.why), "not read: %.200s", h ? "the plugin lacks its entry points" : dlerror());
        g.arm = NULL;
        g.take = NULL;
    }
}

void nccl_choice_arm(int on)
{
    if (g.arm)
        g.arm(on);
}

void nccl_choice_take(dl_choice_t *out)
{
    memset(out, 0, sizeof(*out));
    if (g.take && g.take(out->algo, sizeof(out->algo), out->proto, sizeof(out->proto),
                         &out->nchannels) > 0)
        snprintf(out->from, sizeof(out->from), "profiler");
}

const char *nccl_choice_source(void)
{
    return g.arm ? g.path : g.why;
}
