/* Shared by the two nccl-tests readers (read_ncclt.c: the -J JSON and the
 * names; read_ncclt_text.c: the text table of every version). */
#ifndef DL_NCCLT_H
#define DL_NCCLT_H

#include "analysis.h"

/* The one profile a nccl-tests file gives ("nccl-tests", backend nccl). */
dl_rec_profile_t *dl_ncclt_prof(dl_record_t *r);
/* 22809 -> "2.28.9"; out untouched for anything else. */
void dl_ncclt_nccl_code(double code, char *out, size_t len);
/* Counts a host once in r->hosts / r->nhosts. */
void dl_ncclt_add_host(dl_record_t *r, const char *host);
/* Two rows (out, in) of one size from {time, algbw, busbw, wrong} each; a
 * side with no time is left out. */
dl_status_t dl_ncclt_add_pair(dl_record_t *r, dl_row_t *row, const double v[2][4]);

#endif
