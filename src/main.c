/* dlcomm: collective-communication test harness. Dispatches subcommands. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "util/util.h"
#include "version.h"

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} dl_cmd_t;

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const dl_cmd_t commands[] = {
    {"sweep", cmd_sweep, "measure collectives over sizes, dtypes and profiles"},
    {"compare", cmd_compare, "compare two runs: regressions beyond the noise, exit 1 on any"},
    {"plot", cmd_plot, "gnuplot charts of busbw and time against size"},
    {"report", cmd_report, "peaks, saturation sizes, best profiles, Horovod and NCCL advice"},
    {"preflight", cmd_preflight, "pass/fail checks before a job, naming the host at fault"},
    {"topo", cmd_topo, "hosts, GPUs, NICs, NUMA nodes and the paths between them"},
    {"profiles", cmd_profiles, "list the NCCL-settings profiles a sweep can run"},
    {"__worker", cmd_worker, NULL},
    {"__options", cmd_options, NULL},
    {"version", cmd_version, "print the version and what this build supports"},
    {"help", cmd_help, "this text"},
};

/* A command that takes no arguments refuses any: a typo is not ignored. */
static int no_args(const char *cmd, int argc, char **argv)
{
    if (argc <= 1)
        return 0;
    dl_err("%s takes no arguments, not '%s'", cmd, argv[1]);
    return 1;
}

static int cmd_version(int argc, char **argv)
{
    if (no_args("version", argc, argv))
        return 2;
    printf("dlcomm %s\n", DL_VERSION);
#ifdef DL_HAVE_SIM
    const char *sim = " sim";
#else
    const char *sim = "";
#endif
#ifdef DL_HAVE_NCCL
    printf("backends: mpi nccl%s\n", sim);
#else
    printf("backends: mpi%s\n", sim);
#endif
    return 0;
}

static void help_text(FILE *f)
{
    fprintf(f, "usage: mpirun -np N dlcomm <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < DL_ARRAY_SIZE(commands); i++)
        if (commands[i].help) /* internal commands have none */
            fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n'dlcomm <command> --help' for a command's options.\n"
                "exit codes: 0 all good; 1 a check failed (wrong data, regression, pre-flight);\n"
                "            2 bad usage or input; 3 the run broke (communication error, timeout)\n");
}

static int cmd_help(int argc, char **argv)
{
    if (no_args("help", argc, argv))
        return 2;
    help_text(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) { /* a mistake: the usage goes where mistakes go */
        help_text(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        return cmd_help(0, NULL);
    if (strcmp(name, "--version") == 0)
        return cmd_version(0, NULL);
    for (size_t i = 0; i < DL_ARRAY_SIZE(commands); i++)
        if (strcmp(commands[i].name, name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    dl_err("unknown command '%s' (see dlcomm --help)", name);
    return 2;
}
