/* dlcomm: collective-communication test harness. Dispatches subcommands. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "engine/engine.h"
#include "sys/launch.h"
#include "util/util.h"
#include "version.h"

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);
static int cmd_man(int argc, char **argv);
static int cmd_complete(int argc, char **argv);

static const dl_cmd_t commands[] = {
    {"sweep", cmd_sweep, "measure collectives over sizes, dtypes and profiles"},
    {"compare", cmd_compare, "compare two runs: regressions beyond the noise, exit 1 on any"},
    {"plot", cmd_plot, "gnuplot charts of busbw and time against size"},
    {"tune", cmd_tune, "DDP bucket and Horovod fusion sizes from a model's measured training step"},
    {"history", cmd_history, "every run under some folders: trends, version changes, last verdict"},
    {"report", cmd_report, "peaks, saturation sizes, best profiles, Horovod and NCCL advice"},
    {"preflight", cmd_preflight, "pass/fail checks before a job, naming the host at fault"},
    {"watch", cmd_watch, "the scheduled health check: preflight and sweep kept, compared, exported"},
    {"topo", cmd_topo, "hosts, GPUs, NICs, NUMA nodes and the paths between them"},
    {"profiles", cmd_profiles, "list the NCCL-settings profiles a sweep can run"},
    {"launch", cmd_launch, "run mpirun or srun and exit with dlcomm's code, not the launcher's"},
    {"__worker", cmd_worker, NULL},
    {"__options", cmd_options, NULL},   /* the option tables as JSON, for the tests */
    {"__man", cmd_man, NULL},           /* the build writes the man pages with it */
    {"__complete", cmd_complete, NULL}, /* bash completion asks it */
    {"version", cmd_version, "print the version and what this build supports"},
    {"help", cmd_help, "the commands and the exit codes"},
};

/* A command that takes no arguments refuses any: a typo is not ignored. */
static int no_args(const char *cmd, int argc, char **argv)
{
    if (argc <= 1)
        return 0;
    dl_err("%s takes no arguments, not '%s'", cmd, argv[1]);
    return 1;
}

static int version_main(int argc, char **argv)
{
    if (no_args("version", argc, argv))
        return 2;
    dl_versions_print(stdout);
    return 0;
}

static int cmd_version(int argc, char **argv) { return dl_stdio_run(version_main, argc, argv, 0); }

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

static const dl_cmd_t *find_command(const char *name);
static void unknown_command(const char *name);

/* help, or help COMMAND: that command's --help, as git help does. */
static int help_main(int argc, char **argv)
{
    if (argc > 2) {
        dl_err("help takes one command's name, not '%s' too", argv[2]);
        return 2;
    }
    if (argc == 2) {
        const dl_cmd_t *c = find_command(argv[1]);
        if (!c || !c->help) {
            unknown_command(argv[1]);
            return 2;
        }
        char help[] = "--help", *args[] = {argv[1], help, NULL};
        return c->fn(2, args);
    }
    help_text(stdout);
    return 0;
}

static int cmd_help(int argc, char **argv) { return dl_stdio_run(help_main, argc, argv, 0); }

/* dlcomm(1) and one page per command, from the tables that drive every
 * --help: the build runs this, so the pages and the program cannot disagree. */
static int cmd_man(int argc, char **argv)
{
    return dl_man_main(argc, argv, commands, DL_ARRAY_SIZE(commands));
}

static void list_names(const char *envvar, const char *sub)
{
    char names[256][64];
    int n = dl_data_names(envvar, sub, names, 256);
    if (strcmp(sub, "profiles") == 0)
        printf("default\n"); /* built in */
    for (int i = 0; i < n; i++)
        if (strcmp(sub, "profiles") || strcmp(names[i], "default"))
            printf("%s\n", names[i]);
}

/* What bash completion offers: commands, a command's options, the values
 * of one of its options (its choices), profile and system names (asked at
 * completion time, so the user's folders count). */
static int cmd_complete(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "commands") == 0) {
        for (size_t i = 0; i < DL_ARRAY_SIZE(commands); i++)
            if (commands[i].help)
                printf("%s\n", commands[i].name);
    } else if (strcmp(what, "options") == 0 && argc > 2) {
        for (size_t i = 0; i < DL_ARRAY_SIZE(commands); i++)
            if (strcmp(commands[i].name, argv[2]) == 0 && dl_cmd_takes_options(&commands[i]))
                dl_cmd_help(&commands[i], DL_HELP_WORDS);
    } else if (strcmp(what, "values") == 0 && argc > 3) {
        const dl_cmd_t *c = find_command(argv[2]);
        if (c && dl_cmd_takes_options(c)) {
            dl_opts_help_values(argv[3]);
            dl_cmd_help(c, DL_HELP_VALUES);
        }
    } else if (strcmp(what, "profiles") == 0) {
        list_names("DLCOMM_PROFILES", "profiles");
    } else if (strcmp(what, "systems") == 0) {
        list_names("DLCOMM_SYSTEMS", "systems");
    } else {
        dl_err("__complete commands | options COMMAND | values COMMAND OPTION | profiles | systems");
        return 2;
    }
    return 0;
}

static const dl_cmd_t *find_command(const char *name)
{
    for (size_t i = 0; i < DL_ARRAY_SIZE(commands); i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* The line for a command that is none, with the closest one a user may give. */
static void unknown_command(const char *name)
{
    const char *names[DL_ARRAY_SIZE(commands)];
    char line[256];
    for (size_t i = 0; i < DL_ARRAY_SIZE(commands); i++)
        names[i] = commands[i].help ? commands[i].name : NULL; /* internal ones are not offered */
    snprintf(line, sizeof(line), "unknown command '%.64s'", name);
    dl_suggest_append(line, sizeof(line), name, names, DL_ARRAY_SIZE(commands));
    dl_err("%s (see dlcomm --help)", line);
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
    const dl_cmd_t *c = find_command(name);
    if (!c) {
        unknown_command(name);
        return 2;
    }
    if (!c->help) /* internal: a worker's code is its supervisor's business */
        return c->fn(argc - 1, argv + 1);
    dl_launch_note_init(); /* a code for `dlcomm launch`, when it started this */
    int code = c->fn(argc - 1, argv + 1);
    dl_launch_note(code);
    return code;
}
