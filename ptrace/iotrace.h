/* SPDX-License-Identifier: MIT */
/*
 * Syscall decoding for the files and full levels: turns a traced syscall's
 * entry and exit into io_events, keeping each process's fd table, so that
 * every operation carries its file's path, handle id, inode id and offset.
 */
#ifndef IOWRAP_IOTRACE_H
#define IOWRAP_IOTRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "files.h"
#include "opqueue.h"
#include "process.h"
#include "trace.h"
#include "tracee_mem.h" /* struct ptrace_syscall_info */

struct iotrace {
	struct trace_sink *sink;
	int procfd;
	uint64_t next_handle_id;
	struct file_table files; /* inode ids, files.csv */
	const char *const *include; /* NULL-terminated; empty: everything */
	const char *const *exclude; /* path prefixes not traced */
	uint64_t syscall_stops;
	uint64_t unknown_syscalls; /* trapped, but not in our tables */
	/* the task runs under the descriptor-scoped filter (fdfilter.h) */
	bool scoped;
	bool used_io_uring;
	bool has_rings; /* an io_uring_setup succeeded */
	bool used_linux_aio; /* io_submit: its reads and writes are not */
	/* a process of the task opened /dev/fuse: it may serve a file
	 * system, so the tracer walks no path that the kernel would have
	 * to ask it about (path_stat) */
	bool serves_fuse;
	/* the tracer's processes by tgid: where a descriptor came from */
	const struct pidmap *processes;
	/* directories renamed so far: a cwd or dirfd path taken before the
	 * last one may name a place that is gone */
	uint64_t dir_renames;
	/* calls that may have moved a process's root or mount namespace
	 * (chroot, pivot_root, setns, unshare(CLONE_NEWNS)): every
	 * process's view is looked at again after one */
	uint64_t root_changes;
	/* such calls between their entry and exit stops: the kernel may
	 * have made the move, the tracer not seen it yet, so no view is
	 * taken from what was known (a thread beside the caller) */
	uint64_t views_moving;
	/* paths cut at TRACE_PATH_MAX; processes whose cwd was unknown */
	uint64_t paths_cut, cwds_unknown;
	/* paths not looked up: not all in the kernel's caches (serves_fuse) */
	uint64_t paths_uncached;
	/* paths not read at a call's entry (pages not in memory, once
	 * serves_fuse) and not made up for at its exit */
	uint64_t entry_paths_unread;
	struct opqueues queues; /* operations held to keep offsets exact */
};

/* What the tracer does with a tracee after its entry stop. */
enum entry_next {
	ENTRY_RESUME, /* nothing more to see: resume it */
	ENTRY_TO_EXIT, /* resume it to its exit stop */
	ENTRY_HOLD, /* keep it stopped until iotrace_exit() or
		     * iotrace_call_over() hands it back; then as TO_EXIT */
};

void iotrace_init(struct iotrace *io, struct trace_sink *sink, int procfd,
		  const char *const *include, const char *const *exclude);
/* Writes files.csv and frees everything. */
void iotrace_release(struct iotrace *io);
/* At the seccomp stop. */
enum entry_next iotrace_entry(struct iotrace *io, struct tracee *t,
			      const struct ptrace_syscall_info *si);
/* At the exit stop; returns a tracee held at its entry that may now go on
 * (resume it to its exit stop), or NULL. */
struct tracee *iotrace_exit(struct iotrace *io, struct tracee *t,
			    const struct ptrace_syscall_info *si);
/* t's traced call is over with no exit stop to decode (t died, was
 * detached, or the stop could not be read): the same. */
struct tracee *iotrace_call_over(struct iotrace *io, struct tracee *t);
/* Process p is over (its record written next). */
void iotrace_process_end(struct iotrace *io, struct process *p);
/* t is at its exit stop; last: its process's last thread.  The files
 * only it had open (its own table), or only its process had (the last
 * thread on the process's table), close at the sizes they have now. */
void iotrace_thread_exit(struct iotrace *io, struct tracee *t, bool last);
/* fork/vfork/clone by creator: the child starts with a copy of the
 * creator's fd table, or shares it (at --level files and full only). */
void iotrace_fork(struct tracee *creator, struct process *child);
/* A new thread t, at its first stop before its creator's event: whether
 * its table or cwd may not be its process's, so that it waits for that
 * event (a thread made without CLONE_FILES or CLONE_FS). */
bool iotrace_thread_may_part(const struct tracee *t);
/* A new thread t made by creator: are its descriptor table and cwd its
 * creator's? */
void iotrace_thread(struct iotrace *io, struct tracee *creator,
		    struct tracee *t);

#endif
