/* SPDX-License-Identifier: MIT */
/* report.json (docs/report-format.md) and the --text tables. */
#ifndef IOWRAP_REPORT_EMIT_H
#define IOWRAP_REPORT_EMIT_H

#include "analyze.h"
#include "model.h"

#define REPORT_TOP_N 10

/* Writes report.json to fd; returns 0 or -errno. */
int emit_json(int fd, struct workflow *wf, const struct analysis *an);
/* The headline tables on stdout. */
void emit_text(struct workflow *wf, const struct analysis *an);

/* Indices of the n largest values of key(i) for i < count (ties: lower
 * index first); returns how many were written to out. */
size_t top_n(size_t count, uint64_t (*key)(const void *ctx, size_t i),
	     const void *ctx, size_t *out, size_t n);

/* Darshan-style access pattern of n accesses. */
const char *access_pattern(const struct rw_acc *a);
uint64_t tfile_ops(const struct tfile *f);
uint64_t reread_bytes(const struct tfile *f);
uint64_t gfile_reread_bytes(const struct gfile *g);

#endif
