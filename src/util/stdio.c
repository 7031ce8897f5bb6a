/* stdout, stderr and a reader that went away. A command's text is written
 * to whatever the shell gave it; text that could not be written is said,
 * never silently lost, and never the end of a run (docs/exit-codes.md). */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

int dl_stdio_run(int (*fn)(int, char **), int argc, char **argv, int files_hold_the_record)
{
    /* A closed 0, 1 or 2 is /dev/null: otherwise the next file opened (the
     * folder's lock, a temporary run.json) gets its number, and the tables
     * or the error lines are written into it. */
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int n = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
    /* A pipe whose reader left (| head -1) is EPIPE on the write, not
     * SIGPIPE: the measurement goes on and its files are written whole. */
    signal(SIGPIPE, SIG_IGN);
    int code = fn(argc, argv);
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    if (!bad)
        return code;
    /* The reader stopped reading (| head): its choice, not a failure. The
     * error a buffered write met is gone from errno by now; a pipe with no
     * reader left still says POLLERR. */
    struct pollfd pf = {.fd = 1, .events = POLLOUT};
    if (errno == EPIPE || (poll(&pf, 1, 0) == 1 && (pf.revents & POLLERR)))
        return code;
    const char *why = errno ? strerror(errno) : "a write failed";
    if (files_hold_the_record) { /* the tables are a view of run.json */
        dl_warn("stdout: %s: not every line was shown; the run's files are whole", why);
        return code;
    }
    dl_err("stdout: %s: the output was not written", why);
    return 3;
}
