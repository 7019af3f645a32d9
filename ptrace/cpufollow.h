/* SPDX-License-Identifier: MIT */
/*
 * Keeps the tracer on the CPU of the tracee it serves while one tracee
 * stops in quick succession (a syscall-heavy phase).
 *
 * A stop handled across CPUs costs ~60 us on these VMs, mostly the wake-up
 * of an idle vCPU; on one CPU it costs ~8 us.  The scheduler will not put
 * the two together by itself: a woken task prefers an idle CPU to a busy
 * one.  So in a quick run of stops from one tracee the tracer pins itself
 * to that tracee's CPU and drops to SCHED_IDLE.  A CPU that runs only
 * SCHED_IDLE tasks counts as idle when the kernel places a woken task, so
 * the resumed tracee stays on it, preempts the tracer at once, and the next
 * stop hands the CPU straight back.  The tracee's own affinity and policy
 * are never touched.
 *
 * A SCHED_IDLE tracer can starve behind other work on its CPU while
 * another tracee waits for it.  A watchdog thread ends a phase in which a
 * stop has waited and the tracer handled none for FOLLOW_WATCHDOG_US;
 * phases ended that way back off exponentially.
 */
#ifndef IOWRAP_CPUFOLLOW_H
#define IOWRAP_CPUFOLLOW_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cpu_follow {
	bool enabled; /* more than one CPU allowed, not switched off */
	bool active; /* pinned to `cpu` with SCHED_IDLE */
	int procfd;
	int stat_fd; /* /proc/stat_tid/stat; open until another tid is read
		     * or follow_release */
	pid_t stat_tid;
	pid_t self_tid;
	cpu_set_t allowed; /* the tracer's own mask, restored on leaving */
	pid_t tid; /* the tracee of the current run of stops */
	unsigned run; /* quick consecutive stops from tid */
	unsigned since_check; /* stops since tid's CPU was last read */
	int cpu;
	int64_t last_stop_us;
	int64_t active_since_us, checked_us;
	int64_t holdoff_until_us, holdoff_us;
	unsigned long phases, starved, moves;

	/* shared with the watchdog thread */
	atomic_ulong progress;
	atomic_bool watched; /* a follow phase is on */
	atomic_int demoted; /* enum demotion: the watchdog ended it */
	pthread_t watchdog;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool thread_started, quit;
};

void follow_init(struct cpu_follow *f, int procfd, bool enabled);
/* Called at every stop of tid, before it is resumed; exec_stop: its
 * PTRACE_EVENT_EXEC stop. */
void follow_stop(struct cpu_follow *f, pid_t tid, bool exec_stop);
/* A wait found no stop pending: the tracee may have moved. */
void follow_missed(struct cpu_follow *f);
/* Back to the tracer's own CPUs and policy; stops the watchdog. */
void follow_release(struct cpu_follow *f);

#endif
