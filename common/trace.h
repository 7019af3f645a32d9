/* SPDX-License-Identifier: MIT */
/*
 * The trace sink: the one place a task's trace is written.  Tracers hand it
 * records; it formats them, keeps the totals, latches write errors (reported
 * once, never fatal) and writes summary.json at the end.
 */
#ifndef IOWRAP_TRACE_H
#define IOWRAP_TRACE_H

#include <stdbool.h>

#include "iostats.h"
#include "outdir.h"
#include "record.h"
#include "summary.h"
#include "tracefile.h"

struct trace_sink {
	struct outdir dir;
	struct tracefile procs;
	struct tracefile io; /* fd < 0 unless an I/O level is on */
	struct tracefile files;
	struct tracefile threads;
	struct strbuf line;
	char **problems; /* NULL-terminated */
	size_t nproblems;
	struct tree_totals totals;
	struct io_summary io_summary; /* per file and per mount counters */
	int summary_fd; /* summary.json's file, with room kept for it */
	bool write_error_said; /* on stderr: once, for the first file */
	int64_t last_flush_us;
};

void trace_init(struct trace_sink *ts);
/* Creates the directory and its files; -errno with why filled in. */
int trace_open(struct trace_sink *ts, const char *dir, bool force,
	       struct strbuf *why);
/* The same in a new directory DIR/SUB/NAME[-N] (outdir_create_unique). */
int trace_open_unique(struct trace_sink *ts, const char *dir, const char *sub,
		      const char *name, unsigned *attempt, struct strbuf *why);
bool trace_has_dir(const struct trace_sink *ts);
void trace_proc(struct trace_sink *ts, const struct proc_record *rec);
/* Creates io.csv, files.csv and threads.csv (the files and full levels). */
void trace_open_io(struct trace_sink *ts);
void trace_io(struct trace_sink *ts, const struct io_event *ev);
void trace_file(struct trace_sink *ts, const struct file_record *rec);
void trace_thread(struct trace_sink *ts, const struct thread_record *rec);
/* Records something that made the trace incomplete; says it on stderr. */
void trace_problem(struct trace_sink *ts, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Flushes buffered records if the last flush is a second old. */
void trace_tick(struct trace_sink *ts);
/* Closes the record files and writes summary.json. */
void trace_finish(struct trace_sink *ts, struct run_summary *s);

#endif
