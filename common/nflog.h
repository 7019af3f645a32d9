/* SPDX-License-Identifier: MIT */
/*
 * The tasks a .nextflow.log says have ended.  Nextflow's TaskPollingMonitor
 * logs each one as
 *   MMM-dd HH:mm:ss.SSS [Task monitor] DEBUG n.processor.TaskPollingMonitor -
 *   Task completed > TaskHandler[id: 1; name: N; status: COMPLETED; exit: 0;
 *   error: -; workDir: /w/3f/a2b4...]
 * (one line), and grid executors (GridTaskHandler) put "jobId: J; " first
 * and " started: MS; exited: TIME; " after the work directory, with no ';'
 * after it.  Names and error messages may hold ';', ']' and newlines, so a
 * record is parsed from its known keys on the left and from the work
 * directory's shape (.../xx/hexhash) on the right, never by splitting.
 */
#ifndef IOWRAP_NFLOG_H
#define IOWRAP_NFLOG_H

#include <stdbool.h>
#include <stddef.h>

struct nflog_task {
	char *log_time; /* "Nov-22 10:01:02.345": the record's time */
	char *job_id; /* grid executors only, else NULL */
	char *id;
	char *name;
	char *status; /* TaskStatus: COMPLETED, ... */
	char *exit; /* "0", or "-" when unknown */
	char *error; /* "-" when none */
	char *workdir;
	char *hash; /* "3f/a2b4...": the work directory's last two parts */
	char *started_ms; /* grid: epoch milliseconds, or "-" */
	char *exited; /* grid: the exit file's time, or "-" */
	bool timed_out; /* "Task timed-out >" (submit timeout) */
};

/* What nflog_parse_record() found. */
enum nflog_result {
	NFLOG_OTHER = 0, /* not a task completion record */
	NFLOG_TASK, /* a task, in *t */
	NFLOG_CUT, /* a completion record without its end: cut mid-write */
};

/*
 * Parses one log record (its first line and any continuation lines,
 * joined by '\n').  t is filled only for NFLOG_TASK; release it with
 * nflog_task_release().  *dropped counts earlier completion records that a
 * cut line glued in front of this one.
 */
enum nflog_result nflog_parse_record(const char *rec, size_t len,
				     struct nflog_task *t, size_t *dropped);
void nflog_task_release(struct nflog_task *t);

/* Whether a line starts a log record: "MMM-dd HH:mm:ss.SSS [" (the month
 * is in the JVM's locale, so only its length is bounded). */
bool nflog_is_record_start(const char *line, size_t len);

struct nflog {
	struct nflog_task *tasks;
	size_t n, alloc;
	size_t cut; /* completion records cut mid-write (skipped) */
};

/* All completed tasks of a whole log, in log order. */
void nflog_parse(const char *text, size_t len, struct nflog *log);
void nflog_release(struct nflog *log);

#endif
