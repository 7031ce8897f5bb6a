/*
 * The run record: run.json as C types. One reader (dl_record_read, which
 * every command that reads a dlcomm run.json goes through: compare,
 * report, html, history, plot, tune, the Prometheus file, watch) and one
 * writer (results.h: dl_record_new .. dl_record_write). The schema number,
 * the statuses of a profile and the size a reader takes live here only.
 * The schema file is docs/schema/run.schema.json. Depends on util and
 * cJSON; never on MPI, so the analysis commands read without it.
 */
#ifndef DL_RECORD_H
#define DL_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "../util/util.h"

/* run.json's schema: bumped when a field changes meaning or goes away. */
#define DL_RECORD_SCHEMA 1
/* The largest dlcomm input a reader takes (DL_READ_MAX, util.h): the
 * writer keeps under it, so what dlcomm writes dlcomm reads. */
#define DL_RECORD_MAX_BYTES DL_READ_MAX
/* What one row takes in run.json, a little over what sweeps write (about
 * 950 bytes, and 42 for each rank's figures): a plan is refused when its
 * rows would pass DL_RECORD_MAX_BYTES (dl_job_open). */
#define DL_RECORD_ROW_BYTES 1024.0
#define DL_RECORD_RANK_BYTES 64.0

/* A profile's status: the one list (its names: dl_rec_status_name). */
#define DL_REC_STATUS_LIST(X)                                                                      \
    X(RUNNING, "running")                                                                          \
    X(OK, "ok")                                                                                    \
    X(WRONG, "wrong")                                                                              \
    X(ERROR, "error")                                                                              \
    X(TIMEOUT, "timeout")                                                                          \
    X(CRASHED, "crashed")                                                                          \
    X(INTERRUPTED, "interrupted")                                                                  \
    X(SKIPPED, "skipped")                                                                          \
    X(UNKNOWN, "unknown")
#define DL_REC_ENUM(id, name) DL_REC_##id,
typedef enum { DL_REC_STATUS_LIST(DL_REC_ENUM) DL_REC_STATUS_COUNT } dl_rec_status_t;
#undef DL_REC_ENUM
const char *dl_rec_status_name(dl_rec_status_t s);
/* The status a name stands for; DL_REC_UNKNOWN for any other text. */
dl_rec_status_t dl_rec_status_parse(const char *name);
/* Finished and judged: ok or skipped (by design). Anything else failed. */
int dl_rec_status_failed(dl_rec_status_t s);

/* One measured case, whatever the source. Unknown figures are NAN. */
typedef struct {
    char profile[64], collective[32], dtype[16], op[16], placement[8];
    uint64_t bytes;
    uint64_t asked;         /* the size asked for (dlcomm's bytes_requested; 0: unknown) */
    int ranks;
    double time_us, p50_us; /* mean and median time of one call */
    double ci95_us;         /* half-width of the mean's 95% CI (NAN: unknown) */
    double stdev_us;        /* NAN: unknown */
    double algbw, busbw;    /* GB/s */
    long iterations;        /* 0: unknown */
    double wrong;           /* wrong elements (NAN: not checked) */
    int modelled;           /* from a model (sim backend), not a measurement */
    int group;              /* sweep --split: the row's group; -1: no split */
    /* What the backend chose for the row (run.json's optional "algo",
     * "proto", "nchannels"; "" and 0 when the row does not say). */
    char algo[16], proto[16];
    int nchannels;
    char choice_from[16];   /* "profiler" (NCCL's events), "model"; "" unknown */
    int choice_mixed;       /* the ranks saw different choices */
} dl_row_t;

/* A row's choice in one word, as every output shows it: "Ring/LL/2"
 * (algorithm/protocol/channels; a part not known is left off, or "?" before
 * one that is), "*" after it when the ranks disagreed, "-" when nothing is
 * known. */
void dl_rec_choice_text(const char *algo, const char *proto, int nchannels, int mixed, char *buf,
                        size_t len);
/* The same for a row; and whether two rows' choices differ (both known). */
void dl_row_choice_text(const dl_row_t *r, char *buf, size_t len);
int dl_row_choice_differs(const dl_row_t *a, const dl_row_t *b);

/* A recorded setting: an environment variable, a profile's setting. */
typedef struct {
    char key[64], value[256];
} dl_kv_t;

/* A rank the run named a straggler (run.json "stragglers"). */
typedef struct {
    int rank, rows, of_rows;
    char host[64];
    double late_us;
} dl_strag_t;

/* One profile of the record (a nccl-tests file: one, backend "nccl"). */
typedef struct {
    char name[64], reason[128];
    dl_rec_status_t status;
    int modelled;
    dl_kv_t *env;          /* the profile's settings (its env), in file order */
    size_t nenv;
    /* Algorithm and protocol the profile forces ("" when not forced). */
    char algo[32], proto[32];
    /* dlcomm runs: the backend, what NCCL said it used ("P2P 8 channels;
     * network IB; GDR"), the contradictions with the profile ("rank 1: ...;
     * ..."), the sim's system name and modelled nodes ("" / 0: unknown). */
    char backend[16], used[160], contra[512], system[64];
    int sim_nodes;
} dl_rec_profile_t;

/* DL_FMT_TUNE: a tune --json record, a header (dl_rec_read_header) without rows. */
typedef enum { DL_FMT_DLCOMM, DL_FMT_NCCLT_JSON, DL_FMT_NCCLT_TEXT, DL_FMT_TUNE } dl_fmt_t;

/* A run: its rows and what it ran on (read_ncclt.c fills the same type). */
typedef struct {
    char path[512];
    dl_fmt_t fmt;
    int part;             /* FILE@K: the K-th run of a log holding several (0: the file) */
    dl_row_t *rows;
    size_t nrows, cap;
    dl_rec_profile_t *profs;
    size_t nprofs;
    char hosts[256];      /* "a,b,c" */
    int nhosts, ranks;
    int shared_gpu;       /* ranks on one GPU, each its own NCCL host (0: a GPU each) */
    char tool[48];        /* "dlcomm 0.1.0", "nccl-tests 2.19.6" */
    char nccl[32], cuda[32], driver[32], mpi[64], started[32];
    char kernel[96], gpu[96]; /* rank 0's host kernel; the GPU a worker reported */
    char system[512];         /* sim: the system description the sweep modelled */
    /* What the run recorded beyond its rows, for "what differs": the
     * allow-listed environment, the stragglers (has_strag: the run judged
     * them), each rank's GPU ("0:0000:4a:00.0 1:..."), the backend and
     * why it was chosen, a model's ranks and nodes (0: measured). */
    dl_kv_t *env;
    size_t nenv;
    dl_strag_t *strag;
    size_t nstrag;
    int has_strag;
    char rank_gpus[512], backend[16], backend_why[256];
    int model_ranks, model_nodes;
    int exit_code;        /* the run's (-1: not recorded: still running, or killed) */
} dl_record_t;

/* Reads a dlcomm run.json (a folder: its run.json) into out. The rows
 * are read one at a time from the text, never as one JSON tree: memory is
 * the file and the rows. Bad input: one line naming the file, DL_ERR_INPUT;
 * out of memory: "out of memory", DL_ERR_NOMEM. */
dl_status_t dl_record_read(const char *path, dl_record_t *out);
/* The same from a NUL-terminated text of len bytes (name: for the lines). */
dl_status_t dl_record_parse(const char *text, size_t len, dl_record_t *out);
void dl_record_free(dl_record_t *r);
/* A tune record (tune --json, or a run.json with "tune"; a folder: its
 * run.json): its tune object (the caller deletes it), or NULL when the
 * file is not one; is_run (may be NULL) set when the file is a run.json. */
struct cJSON;
struct cJSON *dl_record_read_tune(const char *path, int *is_run);

/* For the readers of other formats (read_ncclt.c) that fill a record:
 * append a row (copied) or a profile (status ok); a row with no figures. */
dl_status_t dl_rec_push_row(dl_record_t *r, const dl_row_t *row);
dl_rec_profile_t *dl_rec_push_profile(dl_record_t *r, const char *name);
void dl_rec_row_init(dl_row_t *row);
/* A figure no measurement can give (a time <= 0, a negative spread or
 * count, a bandwidth < 0 or beyond DL_REC_MAX_GBPS): what it is, in words,
 * into why; 0 when every known figure is possible. Readers refuse such a
 * row rather than print a change or advice drawn from it. */
#define DL_REC_MAX_GBPS 1e9
int dl_rec_row_impossible(const dl_row_t *row, char *why, size_t len);
/* hosts, ranks, versions and start of a run.json-like document (run.json,
 * a tune record) into out's header; rows untouched. */
void dl_rec_read_header(const struct cJSON *doc, dl_record_t *out);

/* The fingerprint's facts that a reader shows, as a field table: what
 * "what differs" and the descriptions list, each once. */
typedef struct {
    const char *label; /* "NCCL", "CUDA", ... */
    size_t offset;     /* of a char array in dl_record_t */
    size_t size;
} dl_rec_field_t;
extern const dl_rec_field_t dl_rec_version_fields[];
extern const size_t dl_rec_nversion_fields;
#define DL_REC_FIELD(rec, f) ((const char *)(rec) + (f)->offset)

#endif
