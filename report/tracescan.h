/* SPDX-License-Identifier: MIT */
/*
 * Finds trace directories: a directory holding summary.json, or procs.csv
 * alone (a tracer killed before it wrote the summary).  Given directories
 * are walked with openat(), never following symlinks below them, to a
 * bounded depth; a trace directory is not searched further.
 */
#ifndef IOWRAP_REPORT_TRACESCAN_H
#define IOWRAP_REPORT_TRACESCAN_H

#include <stddef.h>

#define TRACESCAN_MAX_DEPTH 16

struct tracescan {
	char **dir; /* paths as ROOT/sub/dir, sorted per root */
	size_t count;
	size_t alloc;
	size_t warnings; /* directories that could not be read */
};

void tracescan_init(struct tracescan *ts);
void tracescan_release(struct tracescan *ts);
/* Adds the trace directories at or below root; returns how many, or -errno
 * if root itself cannot be opened (a warning names it). */
int tracescan_add(struct tracescan *ts, const char *root);

#endif
