/* The status type, its strings and exit codes, and logging. */
#include "util.h"

#include <stdarg.h>
#include <time.h>

static const struct {
    const char *str;
    int exit_code;
} status_info[DL_STATUS_COUNT] = {
    [DL_OK] = {"ok", 0},
    [DL_ERR_USAGE] = {"bad usage", 2},
    [DL_ERR_INPUT] = {"bad input", 2},
    [DL_ERR_UNAVAILABLE] = {"not available here", 2},
    [DL_ERR_IO] = {"cannot write", 2},
    [DL_ERR_CHECK] = {"check failed", 1},
    [DL_ERR_COMM] = {"communication error", 3},
    [DL_ERR_TIMEOUT] = {"timeout", 3},
    [DL_ERR_CRASH] = {"crashed", 3},
    [DL_ERR_NOMEM] = {"out of memory", 3},
    [DL_ERR_INTERNAL] = {"internal error", 3},
    [DL_ERR_WRITE] = {"could not write", 3},
};

const char *dl_status_str(dl_status_t st)
{
    return st < DL_STATUS_COUNT ? status_info[st].str : "unknown status";
}

int dl_status_exit_code(dl_status_t st)
{
    return st < DL_STATUS_COUNT ? status_info[st].exit_code : 3;
}

dl_status_t dl_status_worse(dl_status_t a, dl_status_t b)
{
    return dl_status_exit_code(b) > dl_status_exit_code(a) ? b : a;
}

static int log_quiet, log_mute;
static const char *log_context;

void dl_log_set_quiet(int quiet) { log_quiet = quiet; }
void dl_log_set_mute(int mute) { log_mute = mute; }
void dl_log_set_context(const char *what) { log_context = what; }

static void vlog(const char *level, const char *fmt, va_list ap)
{
    char line[2048];
    if (log_mute)
        return;
    int n = snprintf(line, sizeof(line), "dlcomm: %s%s%s", level, log_context ? log_context : "",
                     log_context ? ": " : "");
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    /* One write per line so lines of several ranks do not interleave. */
    fprintf(stderr, "%s\n", line);
}

void dl_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("error: ", fmt, ap);
    va_end(ap);
}

void dl_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("warning: ", fmt, ap);
    va_end(ap);
}

void dl_info(const char *fmt, ...)
{
    if (log_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}

double dl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
