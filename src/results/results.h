/*
 * results: the one module that turns measurements into what users keep:
 * run.json (schema in docs/results.md), run.csv, the stdout table and the
 * progress line. Files are written atomically, and the run document is
 * rewritten after each profile, so a killed run keeps what finished.
 */
#ifndef DL_RESULTS_H
#define DL_RESULTS_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "../measure/measure.h"
#include "record.h"


/* A new run document: schema, tool version, start time, no profiles yet. */
cJSON *dl_record_new(const char *command);
/* The head alone (schema, tool, command, start, versions): what another
 * document of dlcomm's (preflight --json) begins with. */
cJSON *dl_record_head(const char *command);
/* "backend": {name, why (auto: what was passed over), modelled {system,
 * nodes, gpus_per_node, ranks} for a model (setup NULL: none)}. */
void dl_record_backend(cJSON *run, const char *name, const char *why, const dl_backend_setup_t *setup);
/* The object for one profile, appended to "profiles"; results go in it. */
cJSON *dl_record_add_profile(cJSON *run, const char *name, const char *backend, int modelled);
/* A profile's status, and its reason (NULL: left as it is): the one place
 * a status is written. */
void dl_record_set_status(cJSON *profile, dl_rec_status_t st, const char *reason);
/* The run's exit code ("exit_code"), set or replaced. */
void dl_record_set_exit(cJSON *run, int code);
/* One measured case as a row of the profile's "results". */
void dl_record_add_row(cJSON *profile, const dl_result_t *r);
/* Writes DIR/run.json and DIR/run.csv atomically. */
dl_status_t dl_record_write(const cJSON *run, const char *dir);
/* The CSV text for a run (one row per result of every profile). */
char *dl_record_csv(const cJSON *run);

/* Only these environment variables are ever recorded (prefixes end in _). */
cJSON *dl_env_allowlist(void);
int dl_env_allowed(const char *name);
/* The credential rule alone (any case): a name never recorded, wherever
 * env-like data is (the environment, a profile's env). */
int dl_env_credential_like(const char *name);

/* Takes DIR for this run (src/results/claim.c): an flock on DIR/.dlcomm.lock
 * held until the process ends. Another live run there, or a finished run
 * (run.json) without overwrite: one line, DL_ERR_USAGE. */
dl_status_t dl_out_claim(const char *dir, int overwrite);

/* A series of runs under one folder (dlcomm watch, series.c): each run in
 * a folder named by its UTC start, YYYYMMDDTHHMMSSZ[-N]. lock: one writer
 * (an flock on ROOT/.dlcomm-watch.lock held while fd is open; busy:
 * DL_ERR_USAGE, one line). new: makes this run's folder, its name in name.
 * list: the run folders, oldest first (free with list_free). remove: one
 * run folder and what is in it, refusing any other name. */
dl_status_t dl_series_lock(const char *root, int *fd);
int dl_series_is_run(const char *name);
dl_status_t dl_series_new(const char *root, char *name, size_t len);
int dl_series_list(const char *root, char ***names);
void dl_series_list_free(char **names, int n);
dl_status_t dl_series_remove(const char *root, const char *name);
/* The newest run other than except that ended 0 (its watch.json) and has a
 * sweep: what the next run is compared with, so a regression keeps failing
 * each check until it is fixed. "" when there is none. */
void dl_series_last_ok(const char *root, const char *except, char *name, size_t len);
/* Removes the oldest runs until keep are left, never current or baseline. */
void dl_series_keep(const char *root, int keep, const char *current, const char *baseline);

/* The default output folder, results/<date>-<host>, made new (mkdir, never
 * one that is there): -2, -3... when runs started in the same second. */
dl_status_t dl_out_dir_new(char *buf, size_t len, const char *host);

/* The stdout table, in the nccl-tests spirit. */
/* split (NULL or op NONE: none): the rows carry a group column. */
void dl_table_header(FILE *f, const dl_coll_t *c, const char *profile, int nranks,
                     const dl_split_t *split);
void dl_table_row(FILE *f, const dl_result_t *r);

/* The sweep's header (before the tables; legend: the columns' legend, for
 * a run that prints tables) and footer (after the run is written: per
 * profile its wrong elements, busbw, rows not converged; the stragglers;
 * where the files went when written), read from the run document
 * (banner.c). Printed with -q too: they are the findings. */
void dl_banner_header(FILE *f, const cJSON *run, int legend);
void dl_banner_footer(FILE *f, const cJSON *run, const char *dir, int written);

/* sweep --format nccl-tests (ncclt_out.c): rows in nccl-tests' layout, one
 * block per profile and collective, out-of-place and in-place of a size on
 * one line. run: the run document (its options and fingerprint head each
 * block). free ends the last block. */
typedef struct dl_ncclt dl_ncclt_t;
dl_ncclt_t *dl_ncclt_new(FILE *f, const cJSON *run);
void dl_ncclt_row(dl_ncclt_t *t, const dl_result_t *r, const char *profile);
void dl_ncclt_free(dl_ncclt_t *t);

/* A progress line on stderr, only when stderr is a terminal. */
void dl_progress(size_t done, size_t total, const char *what);
void dl_progress_end(void);

#endif
