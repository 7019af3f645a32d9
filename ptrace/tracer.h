/* SPDX-License-Identifier: MIT */
/*
 * The ptrace tracer: follows every process and thread of the task and hands
 * one proc_record per process to the trace sink.  System-call tracing (the
 * seccomp filter) slots into handle_stop() as one more kind of stop.
 */
#ifndef IOWRAP_TRACER_H
#define IOWRAP_TRACER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpufollow.h"
#include "fdfilter.h"
#include "filter.h"
#include "hostinfo.h"
#include "trace.h"

/* --tracer-threads: at most this many; by default one per CPU the
 * task may use, at most TRACER_DEFAULT_MAX. */
#define TRACER_MAX_THREADS 16
#define TRACER_DEFAULT_MAX 8

/* --handover: which new processes and threads go to another tracer
 * thread (tracer.c, hand_over). */
enum handover {
	HANDOVER_BUSY, /* to one with fewer busy tracees (the default) */
	HANDOVER_ALWAYS, /* every one that may, to the next thread in turn */
	HANDOVER_NEVER,
};

int handover_parse(const char *name);
const char *handover_name(enum handover h);

struct tracer_config {
	bool wait_orphans;
	int threads; /* tracer threads, 1..TRACER_MAX_THREADS; 0: default */
	enum handover handover;
	enum trace_level level;
	long spin_us; /* poll this long for the next stop before sleeping */
	/* how to move next to a tracee in a run of stops (cpufollow.h) */
	enum follow_how follow_cpu;
	const char *const *include; /* path prefixes, NULL-terminated */
	const char *const *exclude;
	struct trace_sink *sink;
	struct cgroup_resolver *cgroups;
	/* --level full: the descriptors the scoped filter names from the
	 * start (filter.h; used only if the task got that filter) */
	struct fd_numbers inherited;
	/* Set from a signal handler: time to flush the trace. */
	volatile sig_atomic_t *tick;
	/* Tests only (IOWRAP_TEST_LOSE_FORK_EVENTS): fork and vfork events
	 * are ignored, as if each creator had been killed in its fork. */
	bool lose_fork_events;
};

/* The longest a new process waits at its first stop for its creator's
 * fork event (tracer.md). */
#define HOLD_LIMIT_S 5

struct tracer_result {
	bool main_reaped;
	int main_status; /* wait status of the main process */
	int64_t main_end_us;
	uint64_t orphans_detached;
	uint64_t max_concurrent;
	uint64_t syscall_stops;
	uint64_t unknown_syscalls;
	bool used_io_uring;
	bool used_linux_aio;
	bool fd_scoped; /* the task got the descriptor-scoped filter */
	uint64_t fd_filters; /* filters added to running processes */
	uint64_t fd_filter_failures; /* ... that could not be */
	uint64_t follow_phases; /* runs of stops served on the tracee's CPU */
	uint64_t follow_starved; /* ... ended because the tracer starved */
	uint64_t follow_moves; /* times the tracer re-pinned to a moved tracee */
	const char *follow_how; /* follow_how_name() */
	int threads; /* tracer threads that ran */
	uint64_t handoffs; /* new processes handed to another thread */
	/* New processes that waited HOLD_LIMIT_S for their creator's event
	 * in vain and went on without it. */
	uint64_t holds_expired;
	char error[256]; /* why tracing broke off, if it did */
};

/* Attaches to a child that waits for its go-ahead; 0 or -errno. */
int tracer_seize(pid_t pid, enum trace_level level);
/* Runs until the task's processes are gone (or the main one, without
 * wait_orphans); returns 0, or -1 with result->error set. */
int tracer_run(const struct tracer_config *cfg, pid_t main_pid,
	       struct tracer_result *result);

#endif
