/* LD_PRELOAD for hardening_limits: pthread_create fails with EAGAIN (as
 * under a thread or address-space limit) when dlcomm's own code asks, that
 * is when the caller lies in the main program; the threads of MPI and the
 * libraries start as usual, so the run gets as far as dlcomm's first
 * thread. DL_FAIL_THREADS=N lets dlcomm's first N threads start and fails
 * the rest; without it nothing changes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static int from_main_program(const void *caller)
{
    Dl_info info;
    char exe[PATH_MAX], obj[PATH_MAX];
    if (!dladdr(caller, &info) || !info.dli_fname || !realpath("/proc/self/exe", exe))
        return 0;
    if (!info.dli_fname[0]) /* the main program, as some loaders name it */
        return 1;
    return realpath(info.dli_fname, obj) && strcmp(obj, exe) == 0;
}

int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    static int started;
    create_fn real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    const char *allow = getenv("DL_FAIL_THREADS");
    if (allow && from_main_program(__builtin_return_address(0)) && started++ >= atoi(allow))
        return EAGAIN;
    return real(t, a, fn, arg);
}
