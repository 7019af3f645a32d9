/* SPDX-License-Identifier: MIT */
/*
 * One trace directory as `iowrap tasks` (and a report) sees it: the few
 * fields of its summary.json that describe the task.  summary.json is read
 * as hostile: bounded in size, every field type-checked, a missing or odd
 * field is "not known", never a crash.
 */
#ifndef IOWRAP_TASKTRACE_H
#define IOWRAP_TASKTRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "strbuf.h"
#include "tracescan.h"

struct cJSON;

/* The largest summary.json read (one with a huge "files" array): the
 * scan's own limit. */
#define TASKTRACE_SUMMARY_MAX TRACESCAN_SUMMARY_MAX

struct task_trace {
	char *path; /* the trace directory */
	char *error; /* why summary.json could not be used, else NULL */
	char *name; /* task.name, else the command's basename, else NULL */
	char *key, *engine, *host, *level;
	bool has_start, has_wall;
	double start_s, wall_s;
	bool has_exit_code;
	int64_t exit_code;
	char *signal_name; /* killed by a signal */
	/* Bytes the task's reads and writes of files returned (summary.json
	 * "mounts", --level full), else rchar/wchar (every read and
	 * write, pipes and exec loading included). */
	bool has_io, io_from_files;
	uint64_t read_bytes, written_bytes;
	char *nf_hash; /* task.nextflow.hash, else from the path */
	char *smk_rule, *smk_jobid;
	struct cJSON *task; /* the "task" object, or NULL */
};

/*
 * Reads DIRFD/summary.json.  Returns 1 if it is an iowrap summary (t
 * filled; t->error set if it is not valid JSON), 0 if the file is not
 * iowrap's (another tool's summary.json), -errno if it cannot be read (the
 * reason in why).  path is the directory's name for messages and t->path.
 */
int task_trace_load(int dirfd, const char *path, struct task_trace *t,
		    struct strbuf *why);
void task_trace_release(struct task_trace *t);

/* tracescan's probe for `iowrap tasks`: a trace directory holds an iowrap
 * summary.json (another tool's is not one), or procs.csv and no
 * summary.json (listed with t->error set); *data is a struct task_trace,
 * freed with task_trace_free.  Unreadable or cut summaries are warned of. */
int task_trace_probe(struct tracescan *ts, int fd, const char *path,
		     void **data);
void task_trace_free(void *t);

/* The hash of a Nextflow work directory that holds a trace directory named
 * .iowrap or .iowrap-N: "3f/a2b4..." from ".../3f/a2b4.../.iowrap". */
char *task_trace_hash_from_path(const char *path);

#endif
