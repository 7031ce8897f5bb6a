/* dlcomm topo: what the harness sees of each host. */
#include <stdio.h>

#include "commands.h"

int cmd_topo(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "dlcomm: topo is not built yet\n");
    return 2;
}
