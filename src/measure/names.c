/* The words a command line names a case with: collectives, dtypes, ops,
 * placements and aggregations, as option choices (util's dl_choices_t)
 * over the collectives' own name tables, so a new collective or dtype is
 * accepted, listed in --help and completed the day it is added. */
#include "measure.h"

const dl_choices_t dl_coll_choices = {.noun = "collective", .names = dl_coll_names,
                                      .n = DL_COLL_COUNT};

/* nccl-tests' (-d) names and the common fp8 spellings, for the same types. */
static const char *const dtype_aliases[] = {
    "float", "float32", "half", "float16", "double", "float64", "int", "int32",
    "f8e4m3", "fp8e4m3", "f8e5m2", "fp8e5m2", "fp8_e4m3", "fp8e4m3", "fp8_e5m2", "fp8e5m2",
    NULL};
const dl_choices_t dl_dtype_choices = {.noun = "dtype", .names = dl_dtype_names, .n = DL_DT_COUNT,
                                       .aliases = dtype_aliases};

const dl_choices_t dl_op_choices = {.noun = "op", .names = dl_op_names, .n = DL_OP_COUNT};

/* nccl-tests' -a numbers: 0 rank 0, 1 mean, 2 min, 3 max. */
static const char *const agg_aliases[] = {"0", "rank0", "1", "mean", "2", "min", "3", "max", NULL};
const dl_choices_t dl_agg_choices = {.noun = "aggregation", .names = dl_agg_names,
                                     .n = DL_AGG_COUNT, .aliases = agg_aliases,
                                     .aliases_from = "nccl-tests'"};
