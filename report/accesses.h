/* SPDX-License-Identifier: MIT */
/*
 * Fig. 5 of Witzke et al.: every read and write of a file, across all tasks
 * that touched it, as (task, start, end, offset, size, R/W).  Bounded: the
 * first pass over io.csv counted each file's accesses, so a second pass
 * keeps a deterministic, even sample of each file within a per-file and a
 * total cap; memory grows with the caps, never with events.
 */
#ifndef IOWRAP_REPORT_ACCESSES_H
#define IOWRAP_REPORT_ACCESSES_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Points kept of one file: the page draws at most as many. */
#define ACCESS_MAX_PER_FILE 3000
/* Points kept in all: about 60 bytes of report.json each. */
#define ACCESS_MAX_TOTAL 200000

struct analysis;

struct access_point {
	size_t task;
	int64_t start_us, end_us, offset;
	uint64_t size;
	char type; /* 'R' or 'W' */
};

/* One file's accesses; points are point[first .. first + kept). */
struct access_file {
	size_t file; /* gfile id */
	uint64_t total, reads, writes; /* all accesses, counted in pass 1 */
	uint64_t quota; /* points it may keep */
	uint64_t seen, kept; /* pass 2 */
	size_t first;
};

struct access_sample {
	struct access_file *file; /* files with accesses, in output order */
	size_t nfiles;
	size_t *slot; /* gfile id -> index in file[], or NO_INDEX */
	struct access_point *point;
	size_t npoints; /* sum of the quotas */
	uint64_t total; /* accesses of all files */
	size_t sampled_files; /* files with quota < total */
};

/* Counts, shares the caps out and reads io.csv again for the points. */
void accesses_sample(struct workflow *wf, struct analysis *an);
void accesses_release(struct access_sample *s);
/* Sets file[].quota: files with fewer accesses than an even share of what
 * is left keep them all, smallest first; none gets above max_per_file. */
void access_share_caps(struct access_file *file, size_t n, uint64_t max_total,
		       uint64_t max_per_file);

/* Whether access idx (0-based) of total is one of the quota kept:
 * idx == floor(j * total / quota) for the next j == kept. */
static inline int access_kept(uint64_t idx, uint64_t kept, uint64_t quota,
			      uint64_t total)
{
	return kept < quota && idx == kept * total / quota;
}

#endif
