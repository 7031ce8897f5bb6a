/* dlcomm __worker RUNDIR PROFILE RANK: hidden; started by a sweep's
 * supervisor with the protocol socket on fd 3 (see src/engine/engine.h).
 * The arguments only name the worker in ps/pgrep; its plan comes over fd 3. */
#include <sys/stat.h>

#include "commands.h"
#include "engine/engine.h"

int cmd_worker(int argc, char **argv)
{
    (void)argc; (void)argv;
    struct stat sb;
    if (fstat(3, &sb) != 0 || !S_ISSOCK(sb.st_mode)) {
        dl_err("__worker is started by 'dlcomm sweep', not by hand");
        return 2;
    }
    return dl_worker_main(3);
}
