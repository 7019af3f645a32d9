/* SPDX-License-Identifier: MIT */
/*
 * Traces written by the research's own eBPF / FUSE-overlay tools (Witzke
 * et al., Fig. 2a): the same fifteen columns as io.csv, but '#' comment
 * lines instead of a header row, fields separated by ", ", times with
 * millisecond resolution, and in the eBPF variant the path written as
 * path:mountroot:superblockroot.  A directory holding such a file is read
 * as one task, so that tool's users get the same report.
 */
#ifndef IOWRAP_REPORT_RESEARCH_H
#define IOWRAP_REPORT_RESEARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "load.h"

#define RESEARCH_NCOLS 15
/* Fig. 2a's column names, in the file's order (io.csv's first fifteen). */
extern const char *const research_columns[RESEARCH_NCOLS];

/* The name of such a file in the directory (the smallest, if several);
 * false if there is none. */
bool research_csv_find(int dirfd, char *name, size_t size);

/* Calls fn for every well-formed row, as scan_io() does for io.csv, and
 * widens the task's start and end to the rows' times.  The rows carry
 * pid, handle, size, the mount root and the raw fields too; the path is
 * cut at :mountroot:sbroot.  Odd paths (a ':' of their own, blanks at
 * their end) are warned about with file and line, five of each kind per
 * file, then counted. */
void research_scan(struct workflow *wf, struct task *t, int dirfd,
		   const char *name, struct csv_problems *prob, io_row_fn fn,
		   void *ctx);

#endif
