/* SPDX-License-Identifier: MIT */
/*
 * Adding a seccomp filter to a running tracee: the tracer makes the
 * stopped thread run seccomp(SECCOMP_SET_MODE_FILTER, TSYNC) itself, then
 * puts back every register, so the task's own syscall is untouched.  The
 * filter is written to a page of the tracer's own in the process (an
 * anonymous mapping it makes the process create once, by the same means):
 * never to the task's stack, which a runtime with small stacks (Go's)
 * may not have to spare below its stack pointer.  The thread's signals
 * are blocked meanwhile, so no handler runs on the borrowed registers.
 * x86_64 threads only.
 */
#ifndef IOWRAP_INJECT_H
#define IOWRAP_INJECT_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

enum inject_result {
	INJECT_DONE, /* added; the thread is stopped where it was */
	INJECT_FAILED, /* not added (err says why); stopped where it was */
	INJECT_GONE, /* the thread stopped for good or died meanwhile:
		      * status (-1: none) is the caller's to handle */
	INJECT_STOPPED, /* not added: the thread stopped for something
			 * else first (a SIGSTOP, a group stop, another
			 * thread's exec), status is that stop, the
			 * caller's to handle; try again later */
};

struct inject_out {
	int err; /* INJECT_FAILED: -errno, or -ESRCH for a thread TSYNC
		  * could not synchronise */
	int status;
	unsigned stops; /* the thread's stops it took */
};

/* Waits for tid's next stop or death, as waitpid(tid, status, __WALL)
 * does (NULL: that): tid or -1 with errno. */
typedef pid_t (*inject_wait_fn)(pid_t tid, int *status);

/*
 * tid is stopped right after a syscall instruction: at a syscall-exit
 * stop, or, with at_entry, at a seccomp stop of a syscall that it will
 * then make again from the start (the filter must be in place before the
 * call runs: clone).  *scratch is the process's page for the filter (0:
 * none yet; set when one is made).
 */
enum inject_result inject_filter(pid_t tid, bool at_entry,
				 const struct sock_filter *code, size_t len,
				 uint64_t *scratch, inject_wait_fn wait,
				 struct inject_out *out);

/*
 * Handing a new process to another tracer thread (ptrace binds a tracee
 * to the thread that attached it): at its first stop, right after its
 * fork's syscall instruction, the thread is set to sleep in ppoll() with
 * every signal blocked, so that it waits there, detached, running nothing
 * of the task's, until the other thread seizes it, interrupts the ppoll
 * and puts it back as it was.  tracer.md says why it is safe.
 */
struct parked {
	struct user_regs_struct regs;
	uint64_t sigmask;
};

/* Sets tid (stopped) to park once resumed or detached; 0 or -errno, and
 * then it is as it was. */
int inject_park(pid_t tid, struct parked *p);
/* Puts a parked thread back (stopped, under its new tracer). */
int inject_unpark(pid_t tid, const struct parked *p);

#endif
