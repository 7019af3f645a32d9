/* SPDX-License-Identifier: MIT */
/*
 * Helper processes that share iowrap's memory (clone(CLONE_VM), as
 * posix_spawn does) instead of a copy of it.  On this VM a fork cost about
 * 1 ms, and its child's first page faults (copy-on-write of what the
 * parent touched) as much again: the seccomp-order probe and each tracer
 * thread's doorbell made iowrap's start at --level files and full about
 * 5 ms slower than at summary.  Such a child runs on a stack of its own,
 * and shares the calling thread's TLS, errno included: it may make only
 * raw syscalls (vmchild_syscall), never call into libc.
 */
#ifndef IOWRAP_VMCHILD_H
#define IOWRAP_VMCHILD_H

#include <stddef.h>
#include <sys/types.h>

/* A stack for one helper, 16-byte aligned. */
#define VMCHILD_STACK_SIZE 16384
struct vmchild_stack {
	_Alignas(16) unsigned char bytes[VMCHILD_STACK_SIZE];
};

/* A syscall that touches no memory of libc's: -errno on failure. */
static inline long vmchild_syscall(long nr, long a, long b, long c, long d,
				   long e)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * Starts fn(arg) in a new process sharing this one's memory, on stack,
 * which must outlive it, with every signal blocked; it ends with SIGCHLD
 * to the calling thread as a forked child does.  Its pid, or -errno.
 */
pid_t vmchild_start(int (*fn)(void *), void *arg, struct vmchild_stack *stack);

#endif
