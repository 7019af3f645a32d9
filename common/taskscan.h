/* SPDX-License-Identifier: MIT */
/*
 * Finds the trace directories under a directory: every directory holding a
 * summary.json that iowrap wrote, at any depth up to a bound: trace roots
 * (ROOT/HOST/KEY/), Nextflow work directories (work/xx/hash/.iowrap/),
 * Snakemake's .snakemake/iowrap/.  Symlinks are never followed (the
 * directories given are the user's own paths and may be); an entry that
 * cannot be read gets one warning and is skipped.
 */
#ifndef IOWRAP_TASKSCAN_H
#define IOWRAP_TASKSCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"
#include "tasktrace.h"

#define TASKSCAN_MAX_DEPTH 8 /* directories below the one given */
#define TASKSCAN_MAX_DIRS 1000000 /* directories opened in all */

struct taskscan {
	struct task_trace *traces;
	size_t n;
	size_t dirs; /* directories opened */
	size_t warnings; /* entries skipped with a warning */
	unsigned max_depth;
	size_t max_dirs;
	bool limit_hit; /* max_dirs reached: the listing is partial */
};

void taskscan_init(struct taskscan *ts);
/* Adds the trace directories under dir (dir itself included) that are not
 * already there (same device and inode).  Returns 0, or -errno if dir
 * cannot be opened (the reason in why). */
int taskscan_add(struct taskscan *ts, const char *dir, struct strbuf *why);
void taskscan_release(struct taskscan *ts);

#endif
