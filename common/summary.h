/* SPDX-License-Identifier: MIT */
/* summary.json: the task's one-object record (docs/summary-schema.md). */
#ifndef IOWRAP_SUMMARY_H
#define IOWRAP_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hostinfo.h"
#include "iostats.h"
#include "record.h"
#include "strbuf.h"
#include "taskid.h"

/* Sums over the process tree, built from the proc_records. */
struct tree_totals {
	uint64_t cpu_ns, utime_us, stime_us;
	uint64_t peak_rss_kib, peak_vm_kib;
	pid_t peak_rss_pid;
	uint64_t rchar, wchar, syscr, syscw;
	uint64_t read_bytes, write_bytes, cancelled_write_bytes;
	uint64_t ctxt_voluntary, ctxt_involuntary, minflt, majflt;
	uint64_t processes, threads, execs;
	uint64_t processes_unmeasured; /* no exit stop: usage missing */
	uint64_t processes_io_unknown; /* measured but /proc/PID/io unread */
	uint64_t processes_max_concurrent;
};

void totals_add(struct tree_totals *t, const struct proc_record *rec);

struct option_value {
	const char *name;
	const char *value; /* a string option; NULL: not given */
	int flag; /* -1: a string option, else the flag's value */
};

struct run_summary {
	char *const *command;
	const char *cwd;
	int64_t start_us, end_us;
	/* the main process */
	bool exit_known;
	int exit_code, exit_signal;
	bool core_dumped;
	int iowrap_status; /* what iowrap exits with; -1: unknown */
	const char *exec_error; /* the command could not be started */
	/* tracing */
	const char *mode; /* "ptrace" or "untraced" */
	const char *level; /* "summary", "files" or "full" */
	bool no_new_privs; /* NO_NEW_PRIVS had to be set for the filter */
	const char *untraced_reason;
	bool wait_orphans;
	uint64_t orphans_detached;
	/* --orphan-timeout's seconds (-1: none), and the processes it sent
	 * SIGTERM and SIGKILL to */
	int64_t orphan_timeout_s;
	uint64_t orphans_terminated, orphans_killed;
	uint64_t syscall_stops; /* seccomp and syscall-exit stops */
	uint64_t unknown_syscalls; /* trapped syscalls not in our tables */
	bool used_io_uring; /* its operations are not traced one by one */
	bool used_linux_aio; /* nor are io_submit's */
	bool fd_scoped; /* data syscalls stop on traced files' fds only */
	uint64_t fd_filters; /* seccomp filters added to running processes */
	uint64_t follow_phases, follow_starved,
		follow_moves; /* see ptrace/cpufollow.h */
	const char *follow_how; /* follow_how_name(): "pin_tracee", ... */
	uint64_t tracer_threads; /* --tracer-threads that ran */
	uint64_t handoffs; /* new processes given to another thread */
	uint64_t holds_expired; /* new processes let go at HOLD_LIMIT_S */
	const char *handover; /* --handover; NULL: untraced */
	const char *totals_source; /* "ptrace-exit-stops" or "rusage" */
	struct tree_totals totals;
	const struct option_value *options;
	size_t noptions;
	const struct io_summary *io; /* set by trace_finish */
	/* summary.json's "files" left empty: with them it would not fit
	 * (files.csv has every file). */
	bool files_left_out;
	const struct host_info *host;
	const struct task_context *context;
	const struct task_identity *task;
};

/* summary.json lists the busiest files only: files.csv has every one. */
#define SUMMARY_FILES_MAX 1000

/* Formats the summary; problems is a NULL-terminated list of strings. */
void summary_format(struct strbuf *sb, const struct run_summary *s,
		    char *const *problems);

#endif
