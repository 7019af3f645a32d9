/* SPDX-License-Identifier: MIT */
/*
 * Finds the trace directories under directories given: trace roots
 * (ROOT/HOST/KEY/), Nextflow work directories (work/xx/hash/.iowrap/),
 * Snakemake's .snakemake/iowrap/, any -o DIR.  One walker for `iowrap
 * tasks`, `report` and `export`; the probe decides with tracescan_kind
 * (one rule for all three).  Symlinks are never followed below a directory given
 * (the directories given are the user's own paths and may be); an entry
 * that cannot be read gets one warning and is skipped; the walk is bounded
 * in depth and in directories opened; a trace directory is not searched
 * further; one reached twice (DIR and DIR/HOST both given) is kept once;
 * the result is in path order.
 */
#ifndef IOWRAP_TRACESCAN_H
#define IOWRAP_TRACESCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

#define TRACESCAN_MAX_DEPTH 8 /* directories below the one given */
#define TRACESCAN_MAX_DIRS 1000000 /* directories opened in all */

struct tracescan;

/* Whether the directory open at fd (named path) is a trace directory: 1
 * yes (*data is kept with it), 0 no (it is searched further). */
typedef int (*tracescan_probe_fn)(struct tracescan *ts, int fd,
				  const char *path, void **data);

struct tracescan_dir {
	char *path; /* DIR/sub/dir */
	unsigned long long dev, ino;
	void *data; /* the probe's, freed with free_data */
};

struct tracescan {
	struct tracescan_dir *dir;
	size_t n, alloc;
	size_t dirs; /* directories opened */
	size_t warnings; /* entries skipped with a warning */
	unsigned max_depth;
	size_t max_dirs;
	bool limit_hit; /* max_dirs reached: the listing is partial */
	const char *who; /* the command, the prefix of warnings */
	tracescan_probe_fn probe;
	void (*free_data)(void *data);
};

/* A scan for command who ("tasks") with probe; free_data may be NULL. */
void tracescan_init(struct tracescan *ts, const char *who,
		    tracescan_probe_fn probe, void (*free_data)(void *data));
/* Adds the trace directories under dir (dir itself included).  Returns how
 * many were found there (some may have been known), or -errno if dir
 * cannot be opened (the reason in why). */
int tracescan_add(struct tracescan *ts, const char *dir, struct strbuf *why);
void tracescan_release(struct tracescan *ts);

/*
 * What makes a directory a trace, for every reader (`iowrap tasks`,
 * `report`, `export`): an iowrap summary.json (its "schema" starts with
 * iowrap-summary/, one cut mid-write included), or a regular procs.csv
 * (the summary missing, unreadable or not iowrap's: then the caller says
 * so).  A summary.json that is neither is one warning naming it, and the
 * directory is searched further: another tool's summary.json (MultiQC's)
 * hides no trace below it.
 */
enum tracescan_kind {
	TRACESCAN_NONE, /* not a trace directory */
	TRACESCAN_SUMMARY, /* an iowrap summary.json */
	TRACESCAN_PROCS, /* procs.csv, and no iowrap summary.json */
};

/* The largest summary.json parsed to find its "schema" when the first
 * bytes do not name it (the tracer writes it first). */
#define TRACESCAN_SUMMARY_MAX (64u << 20)

enum tracescan_kind tracescan_kind(struct tracescan *ts, int fd,
				   const char *path);

/* One warning "WHO: PATHWHAT: WHY; skipped", counted in ts->warnings. */
void tracescan_warn(struct tracescan *ts, const char *path, const char *what,
		    const char *why);
/* Whether fd holds a regular file name (not through a symlink). */
bool tracescan_has_file(int fd, const char *name);

#endif
