/* SPDX-License-Identifier: MIT */
/*
 * Reads one trace directory into a task: summary.json (cJSON), procs.csv,
 * files.csv, then io.csv streamed from a read-only mapping.  Everything in
 * a trace is treated as hostile: a bad row is skipped with a warning that
 * names the file and line, and counted.
 */
#ifndef IOWRAP_REPORT_LOAD_H
#define IOWRAP_REPORT_LOAD_H

#include "model.h"

/* Appends the trace in dir to wf; returns 0, or -1 if nothing usable was
 * there (a warning says why). */
int load_trace(struct workflow *wf, const char *dir);
/* Loads every trace directory at or below the roots (tracescan.h);
 * returns the number of tasks. */
size_t load_traces(struct workflow *wf, char **roots, int nroots,
		   bool with_files);
/* The same without files.csv and io.csv: identity, times and totals. */
int load_trace_identity(struct workflow *wf, const char *dir);
void workflow_release(struct workflow *wf);
/* Frees the task being loaded at wf->task[wf->ntasks]. */
void task_discard_last(struct workflow *wf);

/* Index of the task's record for a file, created on first use. */
size_t task_file_by_inode(struct task *t, uint64_t inode, const char *path,
			  size_t path_len);
size_t task_file_by_path(struct task *t, const char *path, size_t path_len);
/* Gives file i a new name (a rename). */
/* Record i was opened through a symbolic link that led to path (the
 * first such open's). */
void task_file_reached(struct task *t, size_t i, const char *path, size_t len);
void task_file_rename(struct task *t, size_t i, const char *path, size_t len);
/* The name leads to file i from now on (an open, stat or exec by it). */
void task_file_named(struct task *t, size_t i, const char *path, size_t len);
/* The name no longer leads to file i (renamed away or unlinked). */
void task_file_unname(struct task *t, size_t i, const char *path, size_t len);
/* One io.csv row, valid while the row is being handled. */
struct io_row {
	int64_t start, end, result, offset;
	uint64_t inode;
	uint32_t flags;
	char type;
	const char *path, *path2;
	size_t path_len, path2_len;
	/* Only rows of the research's tools (research.h) fill these: */
	uint64_t pid, handle;
	int64_t size;
	const char *mount_root; /* "" when not given */
	const char *const *raw; /* the 15 trimmed fields; NULL: io.csv */
};

/* Notes the rename or link r (path -> path2), the task's latest row, for
 * the cross-task analysis; i: the task's record of the file moved, or
 * (size_t)-1.  Returns the move noted. */
struct name_move *task_add_move(struct task *t, const struct io_row *r,
				size_t i);

typedef void (*io_row_fn)(void *ctx, const struct io_row *r);
/* Calls fn for every well-formed row of the task's io.csv, in file order;
 * bad rows are counted in prob and warned about through wf. */
void scan_io(struct workflow *wf, struct task *t, int dirfd,
	     struct csv_problems *prob, io_row_fn fn, void *ctx);
/* Streams io.csv into the task's per-file records. */
void load_io(struct workflow *wf, struct task *t, int dirfd);

#endif
