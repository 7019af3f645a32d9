/* SPDX-License-Identifier: MIT */
/*
 * Descriptor-scoped data filters.  At --level full a read or write on a
 * pipe, a socket or /dev/null has nothing to record, yet the stop for it
 * costs as much as one on a file.  Where the task runs with NO_NEW_PRIVS
 * (the usual case: iowrap sets it when it lacks CAP_SYS_ADMIN), the base
 * filter lets the native (x86_64) data syscalls through except on the
 * descriptors that held a traced file when the task started; each time a
 * process gets a traced file on a new descriptor number, the tracer adds
 * a filter for that number to the process by syscall injection
 * (inject.h).  Filters can only add stops, never remove one: a number,
 * once filtered, stops for good, whatever it holds later.  i386 and x32
 * data syscalls are not scoped: the base filter traces them all.
 */
#ifndef IOWRAP_FDFILTER_H
#define IOWRAP_FDFILTER_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A set of descriptor numbers: any below 64, and a few above (bash
 * reads its script on fd 255).  Past that, overflow: every number. */
#define FDSCOPE_LOW 64
#define FDSCOPE_HIGH 8
struct fd_numbers {
	uint64_t low; /* bit n: descriptor n */
	int high[FDSCOPE_HIGH];
	uint8_t nhigh;
	bool overflow;
};

void fd_numbers_add(struct fd_numbers *s, int fd);
/* Whether fd is listed (overflow aside). */
bool fd_numbers_has(const struct fd_numbers *s, int fd);
/* Filters a process may gather before it gets the all-descriptors one:
 * every filter runs at every syscall of the process. */
#define FDSCOPE_MAX_FILTERS 24
/* The most descriptors one filter names (BPF jumps reach 255). */
#define FDFILTER_MAX_FDS 32

/* What a process's chain of filters stops for (fork copies it, exec
 * keeps it, as the kernel does the filters). */
struct fd_scope {
	struct fd_numbers fds; /* data syscalls on these stop */
	bool all; /* on every descriptor */
	bool want_all; /* asked for (clone with CLONE_FILES, io_uring) */
	bool gave_up; /* a filter could not be added: no more tries */
	uint16_t filters; /* in this process's chain, counting its parent's */
	uint8_t retries; /* additions that failed for the moment */
};

/* The sc_id of a native data syscall's number; 0 (SC_UNKNOWN) if the
 * number is not one.  Scoped filters return SC_NATIVE_DATA: this tells
 * the tracer which call stopped. */
unsigned fdfilter_native_id(uint32_t nr);

/*
 * The base filter's prologue into code (at most cap instructions): traps
 * syscall numbers newer than libseccomp's tables and, with scoped set,
 * decides the native data syscalls (traced on fds[0..nfds), else let
 * through); everything else falls through to the instruction after it.
 * Returns its length, or -E2BIG.
 */
int fdfilter_prologue(struct sock_filter *code, size_t cap, bool scoped,
		      const int *fds, size_t nfds);

/*
 * A filter to add to a running process: native data syscalls on
 * fds[0..nfds) (on all of them with all set) stop; nothing else does.
 * Returns its length, or -E2BIG.
 */
int fdfilter_scoped(struct sock_filter *code, size_t cap, const int *fds,
		    size_t nfds, bool all);

/* A filter to add, and what it adds. */
#define FDFILTER_MAX_INSNS 256
struct fd_plan {
	int fds[FDFILTER_MAX_FDS];
	size_t nfds;
	bool all;
	int len;
	struct sock_filter code[FDFILTER_MAX_INSNS];
};

/*
 * What a process's filters lack, given the descriptor numbers its table
 * has held traced files on: false if nothing, else plan holds the filter
 * to add.
 */
bool fdscope_plan(const struct fd_scope *s, const struct fd_numbers *traced,
		  struct fd_plan *plan);
/* Whether the process's filters miss a number of traced (fdscope_plan
 * would plan a filter to add). */
bool fdscope_pending(const struct fd_scope *s, const struct fd_numbers *traced);
/* Records the plan's filter as added, or that adding one failed (then
 * the process gets no more tries: the failure is in the summary). */
void fdscope_done(struct fd_scope *s, const struct fd_plan *plan, bool added);
/* A failure that may pass (TSYNC found a thread mid-exec): false once
 * there were too many, and then the process gets no more tries. */
bool fdscope_may_retry(struct fd_scope *s, int err);
/* A forked child has its parent's filters. */
void fdscope_inherit(struct fd_scope *child, const struct fd_scope *parent);

#endif
