/* Internal to the engine: one worker process (see engine.h for the why). */
#ifndef DL_ENGINE_SPAWN_H
#define DL_ENGINE_SPAWN_H

#include <sys/types.h>

#include "engine.h"

typedef struct {
    pid_t pid;
    int fd;       /* supervisor's end of the socketpair */
    int running;  /* not reaped yet */
    int wstatus;  /* waitpid status once reaped */
    char log[2048];
} dl_worker_t;

dl_status_t dl_worker_spawn(const dl_profile_t *p, const char *run_dir, int rank,
                            dl_worker_t *w);
/* Closes the socket; SIGTERM to its process group, SIGKILL after grace_s; reaps. */
void dl_worker_end(dl_worker_t *w, double grace_s);
/* Reaps a worker that said DONE; DL_ERR_TIMEOUT if it does not exit in grace_s. */
dl_status_t dl_worker_wait_exit(dl_worker_t *w, double grace_s);
void dl_worker_describe_exit(const dl_worker_t *w, char *buf, size_t len);
/* The worker's last "dlcomm: error: ..." line (the prefix dropped), else
 * (unless errors_only) its last "dlcomm: ..." line; "" if none. */
void dl_worker_last_error(const char *log, int errors_only, char *buf, size_t len);

#endif
