/* SPDX-License-Identifier: MIT */
/* Reading a stopped tracee's memory: bounded, and hostile-safe (a bad
 * pointer is an error, never a crash or an unbounded read). */
#ifndef IOWRAP_TRACEE_MEM_H
#define IOWRAP_TRACEE_MEM_H

/* The one place both are included, in this order: glibc's sys/ptrace.h
 * defines, as enums, names linux/ptrace.h defines as macros, so it has to
 * come first (musl's does not care).  Include this header, not those. */
#include <sys/ptrace.h>
#include <linux/ptrace.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* PTRACE_GET_SYSCALL_INFO at any stop; false if refused. */
bool tracee_syscall_info(pid_t tid, struct ptrace_syscall_info *si);
/*
 * Which pages of a tracee may be read.  Reading one that is not in memory
 * faults it in; for a page of a file that is a read of the file, and on
 * a FUSE mount served by a process of the task, a request to a process
 * that may be stopped for the tracer: it would wait for ever.
 * TRACEE_ANY_PAGE reads any; a procfd (the tracer's /proc) reads only
 * pages its TID/pagemap shows present or swapped, else -EAGAIN (also for
 * an address in no mapping, and where pagemap cannot be read).
 */
#define TRACEE_ANY_PAGE (-1)

/* Copies len bytes from addr; 0 or -errno. */
int tracee_read(pid_t tid, int pages, uint64_t addr, void *buf, size_t len);
#define TRACEE_REWRITE_MAX 512
/*
 * Whether a syscall could write len bytes (at most TRACEE_REWRITE_MAX) at
 * addr: they are read and written back unchanged, any page, so only where
 * no page of the tracee can be a file it serves.  0 or -errno.
 */
int tracee_rewrite(pid_t tid, uint64_t addr, size_t len);
/* Copies a NUL-terminated string of at most size-1 bytes; returns its
 * length, or -errno (-ENAMETOOLONG if it does not end in size). */
ssize_t tracee_read_str(pid_t tid, int pages, uint64_t addr, char *buf,
			size_t size);

#endif
