/* SPDX-License-Identifier: MIT */
/*
 * The tracer's process and thread table.  A process is measured at its
 * threads' PTRACE_EVENT_EXIT stops, while /proc still holds its final
 * figures (Kickstart's level 2): each thread's exact on-CPU time and
 * context switches when it stops, the process-wide figures when the last
 * thread stops.
 */
#ifndef IOWRAP_PROCESS_H
#define IOWRAP_PROCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdfilter.h"
#include "hostinfo.h"
#include "pidmap.h"
#include "procfs.h"
#include "record.h"
#include "strbuf.h"
#include "trace.h"

struct process;
struct fdtable;
struct parked;

/* The traced syscall a thread is in, between its entry and exit stops. */
struct sc_call {
	bool active; /* waiting for the exit stop (resume with SYSCALL) */
	bool skip_entry; /* kernels < 4.8: a syscall-enter-stop comes first */
	bool at_entry; /* in the entry stop: an event ends where it starts */
	bool alone; /* the process's only thread at the entry stop */
	/* a chroot, pivot_root, setns or unshare(CLONE_NEWNS) in flight:
	 * iotrace's views_moving counts it */
	bool moves_view;
	uint16_t id; /* enum sc_id */
	uint32_t arch; /* AUDIT_ARCH_* */
	uint64_t nr; /* the syscall's number (orig_rax), x32's bit included */
	bool x32; /* x86_64 arch, x32 ABI: 32-bit pointers and sizes */
	uint64_t args[6];
	int64_t start_us;
	uint64_t utime_us, stime_us;
	uint64_t rchar_before; /* execve: the kernel's own reads at exec */
	/* execve, chdir: its path, resolved at the entry (a successful exec
	 * replaces the memory it was in, a chdir the directory it was
	 * relative to); owned, freed at the exit or with the tracee */
	char *entry_path;
	bool empty_path; /* fstatat, statx, faccessat2 on dirfd itself */
	bool empty_path_unread; /* ... not known at the entry (read_mem) */
	/* unlink, rmdir, rename: the name was in a page not in memory
	 * (read_mem), so whether a file loses its last name is unknown */
	bool doomed_unread;
	/* unlink, rmdir, rename: the inode a name named before the call, if
	 * it was that inode's last link (its number may then be reused) */
	uint64_t doomed_dev, doomed_ino;
};

struct tracee {
	pid_t tid;
	struct process *proc;
	struct tracee *next; /* in proc->threads */
	bool exit_stopped; /* its PTRACE_EVENT_EXIT stop has been seen */
	struct sc_call call;
	/* opqueue.h: the key it holds or waits for (0: none), and the
	 * tracee waiting behind it */
	uint64_t queue_key;
	struct tracee *queue_next;
	/* The tracer thread it is bound to (tracer.c's workers); a new one
	 * is its parent's thread's, as the kernel attaches it */
	int owner;
	pid_t tracer_tid; /* TracerPid when first seen (0: unknown) */
	bool fresh; /* not resumed yet: at its first stop */
	/*
	 * A new process whose first stop came before its creator's fork,
	 * vfork or clone event (tracer.c's announce): it is kept at that
	 * stop (held) until the event has given it its descriptors, else
	 * its first calls would find none.
	 */
	bool unannounced;
	bool held;
	/* Left at its entry stop behind another thread's call on the same
	 * file (ENTRY_HOLD) until that call's end resumes it. */
	bool queued;
	bool release_mailed; /* held: its tracer thread is told to let go */
	int64_t held_since_us; /* monotonic */
	/* Parked and detached for another tracer thread, not seized yet. */
	bool handing;
	/* Held at its execve entry until no thread of its process is
	 * handing (tracer.c's exec_in). */
	bool exec_held;
	int64_t last_stop_us; /* monotonic: when it last stopped */
	struct parked *parked; /* handed to owner, which puts it back */
	bool io_counted; /* its own I/O is in proc->threads_io */
	/* What of it is there: read before its exit stop (exit_group's
	 * caller counts the others at its own), it is read again at it. */
	struct proc_io io_seen;
	bool io_final; /* io_seen was read at its exit stop */
	/* A descriptor table apart from its process's (unshare(CLONE_FILES)
	 * in a thread, a thread made without CLONE_FILES), which a thread it
	 * makes with CLONE_FILES shares; NULL: its process's. */
	struct fdtable *fds;
	int64_t start_us, end_us; /* first seen; its exit stop (0: none) */
	/* A traced call a signal interrupted, whose fate the kernel decides
	 * later (tracer.c's interrupted calls): its row waits. */
	int16_t intr_code; /* 512 (ERESTARTSYS) ... 516; 0: none */
	bool intr_stepping; /* resumed with PTRACE_SINGLESTEP into it */
};

struct child_io {
	pid_t pid;
	uint64_t starttime_ticks; /* tells it from a later one of its pid */
	struct proc_io io;
};

struct process {
	struct proc_record rec;
	/*
	 * The /proc/ID entry that shows its descriptors and cwd: its pid's,
	 * until its first thread ends before the others (pthread_exit in
	 * main): the kernel then drops that thread's files and fs, and
	 * /proc/PID/fd, /proc/PID/cwd and kcmp by its pid fail.  A live
	 * thread's id from then on.
	 */
	pid_t view_tid;
	struct strbuf exe, argv, cwd, cgroup_path;
	struct tracee *threads;
	int live_threads; /* threads not yet past their exit stop */
	/* The SIGSTOP one of its threads last took came from a process of
	 * the task: taken (and cleared) at its group-stop (tracer.c's
	 * follow_job_stop). */
	bool stopped_by_task;
	bool final_read; /* the process-wide figures have been read */
	bool thread_unmeasured;
	bool had_children; /* made a process (fork, vfork, clone) */
	/* Its threads' own I/O, each thread's added once (own_io); lost:
	 * a thread's could not be read before it was gone. */
	struct proc_io threads_io;
	bool threads_io_lost;
	struct child_io *children; /* children's final I/O counters */
	size_t nchildren, children_alloc;
	struct fdtable *fds; /* NULL until a traced syscall needs it */
	/* A thread has had a table of its own: each thread's descriptors
	 * are read through its own /proc/TID (view_tid's may not be its). */
	bool fds_split;
	char *cwd_cache; /* NULL: read /proc/PID/cwd when needed */
	/* Where its last chdir went, or its parent's cwd at the fork: the
	 * cwd where /proc cannot say (longer than 4095 bytes). */
	char *cwd_hint;
	uint64_t cwd_gen; /* iotrace's count of directory renames then */
	/* The view of the files it has (files.h's mount_view): 0 the
	 * tracer's own.  Valid while root_gen is iotrace's root_changes + 1
	 * (0: not looked at yet) and no call that may move a view is in
	 * flight (iotrace's views_moving). */
	uint32_t root_view;
	uint64_t root_gen;
	/* Not one cwd for all its threads (a thread's unshare(CLONE_FS), or
	 * a thread made without CLONE_FS), or one it shares with another
	 * process (clone(CLONE_FS)): the cwd is the calling thread's, read
	 * at each call, never cached. */
	bool cwd_per_call;
	struct fd_scope scope; /* what its seccomp filters stop for */
	uint64_t inject_page; /* inject.h's page in its memory; 0: none */
	/* The CPU times last written in an event (iotrace.c): none goes
	 * back. */
	uint64_t events_utime_us, events_stime_us;
};

/* argv beyond this is cut (the trace says so with its quoting). */
#define CMDLINE_BUF_SIZE (64 * 1024 + 1)

struct proc_table {
	struct pidmap tracees; /* tid -> tracee */
	struct pidmap processes; /* tgid -> process */
	int procfd;
	/* The tracer thread handling the stop now (under the tracer's
	 * lock): TracerPid of a child it attached, owner of new tracees. */
	pid_t tracer_tid;
	int owner;
	struct cgroup_resolver *cgroups;
	char *cmdline_buf; /* CMDLINE_BUF_SIZE, reused at every exec */
	uint64_t live_processes, max_live_processes;
	/* Where a thread's row goes when it ends (threads.csv); NULL:
	 * nowhere. */
	struct trace_sink *sink;
};

void proc_table_init(struct proc_table *pt, int procfd,
		     struct cgroup_resolver *cgroups);
void proc_table_release(struct proc_table *pt);
struct tracee *tracee_find(struct proc_table *pt, pid_t tid);
/* Finds or adds the tracee; a new one learns its process from /proc. */
struct tracee *tracee_get(struct proc_table *pt, pid_t tid, pid_t parent_tgid);
/*
 * The child a fork, vfork or clone event names.  Its own first stop may
 * have made it already, or not yet (then it is made here), or it may have
 * come and gone: a parent preempted between creating it and reporting the
 * event can report a child that has exec'd, exited and been reaped
 * meanwhile.  That one is not made again (NULL): it would be a process
 * that never ends.  A live child is always traced by us, as the kernel
 * attaches it before it runs.  Its pid reused by a process we do not trace,
 * or by one of ours that the parent did not make, is not the child (NULL).
 */
struct tracee *tracee_get_child(struct proc_table *pt, pid_t tid,
				const struct process *parent);
/* tid, not known yet, with st its /proc status: added if parent made it
 * (its thread, its child, or its sibling), else NULL. */
struct tracee *tracee_add_child(struct proc_table *pt, pid_t tid,
				const struct process *parent,
				const struct proc_status *st);
/* The tid's thread is gone: drops it; returns its process. */
struct process *tracee_drop(struct proc_table *pt, struct tracee *t);
void process_exec(struct proc_table *pt, struct tracee *t, pid_t former_tid);
/*
 * A forked child runs its parent's program until it execs: it starts with
 * the parent's exe and argv, which /proc replaces at its end if it can
 * still be read then (a SIGKILL may end it with no exit stop).
 */
void process_forked(struct process *child, struct process *parent);
/*
 * A thread's PTRACE_EVENT_EXIT stop.  The process is measured at the last
 * one, or at once if this thread takes the group with it (exit_group, a
 * fatal signal): a thread killed so while it runs may make no exit stop of
 * its own.  True if the process was measured now, its last look.
 */
bool process_exit_stop(struct proc_table *pt, struct tracee *t);
/* Reads what /proc shows of a process still running (detach). */
void process_read_running(struct proc_table *pt, struct process *p);
void process_free(struct proc_table *pt, struct process *p);

#endif
