// SPDX-License-Identifier: MIT
#include "process.h"

#include <errno.h>
#include <linux/audit.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <unistd.h>

#include "fdtable.h"
#include "procfs.h"
#include "tracee_mem.h"
#include "util.h"

static void tracee_free(struct tracee *t)
{
	free(t->call.entry_path);
	free(t->parked);
	fdtable_put(t->fds);
	free(t);
}

/*
 * A thread other than its process's first is gone from the table: its
 * row in threads.csv says whose the tid in io.csv's rows is.  tid is the
 * one its calls had (an exec by it gives it the leader's from then on).
 */
static void tracee_end(struct proc_table *pt, struct tracee *t, pid_t tid)
{
	struct thread_record rec = {
		.tid = tid,
		.pid = t->proc->rec.pid,
		.start_us = t->start_us,
		.end_us = t->end_us ? t->end_us : now_realtime_us(),
	};

	if (pt->sink && tid != rec.pid)
		trace_thread(pt->sink, &rec);
	tracee_free(t);
}

void proc_table_init(struct proc_table *pt, int procfd,
		     struct cgroup_resolver *cgroups)
{
	memset(pt, 0, sizeof(*pt));
	pidmap_init(&pt->tracees);
	pidmap_init(&pt->processes);
	pt->procfd = procfd;
	pt->tracer_tid = gettid();
	pt->cgroups = cgroups;
	pt->cmdline_buf = xmalloc(CMDLINE_BUF_SIZE);
}

void proc_table_release(struct proc_table *pt)
{
	/* process_free() removes from the map, which moves its slots. */
	while (pt->processes.count > 0) {
		size_t i = 0;

		while (!pt->processes.slot[i].key)
			i++;
		process_free(pt, pt->processes.slot[i].value);
	}
	pidmap_release(&pt->tracees);
	pidmap_release(&pt->processes);
	free(pt->cmdline_buf);
	pt->cmdline_buf = NULL;
}

struct tracee *tracee_find(struct proc_table *pt, pid_t tid)
{
	return pidmap_get(&pt->tracees, tid);
}

static struct process *process_new(struct proc_table *pt, pid_t tgid,
				   pid_t ppid)
{
	struct process *p = xcalloc(1, sizeof(*p));
	struct process *parent = pidmap_get(&pt->processes, ppid);

	if (parent)
		parent->had_children = true;
	p->rec.pid = tgid;
	p->view_tid = tgid;
	p->rec.ppid = ppid;
	p->rec.start_us = now_realtime_us();
	p->rec.end = PROC_LOST;
	sb_init(&p->exe, PATH_MAX);
	sb_init(&p->argv, 256 * 1024);
	sb_init(&p->cwd, PATH_MAX);
	sb_init(&p->cgroup_path, 1024);
	pidmap_put(&pt->processes, tgid, p);
	pt->live_processes++;
	if (pt->live_processes > pt->max_live_processes)
		pt->max_live_processes = pt->live_processes;
	return p;
}

void process_free(struct proc_table *pt, struct process *p)
{
	while (p->threads) {
		struct tracee *t = p->threads;

		p->threads = t->next;
		pidmap_remove(&pt->tracees, t->tid);
		tracee_end(pt, t, t->tid);
	}
	if (pidmap_get(&pt->processes, p->rec.pid) == p) {
		pidmap_remove(&pt->processes, p->rec.pid);
		pt->live_processes--;
	}
	fdtable_put(p->fds);
	free(p->cwd_cache);
	free(p->cwd_hint);
	free(p->children);
	sb_release(&p->exe);
	sb_release(&p->argv);
	sb_release(&p->cwd);
	sb_release(&p->cgroup_path);
	free(p);
}

static void add_thread(struct proc_table *pt, struct process *p,
		       struct tracee *t)
{
	t->proc = p;
	t->next = p->threads;
	p->threads = t;
	p->live_threads++;
	p->rec.usage.threads++;
	pidmap_put(&pt->tracees, t->tid, t);
}

/* A new thread of a process whose viewing thread has ended (move_view
 * found no other then) shows its descriptors from now on. */
static void adopt_view(struct proc_table *pt, struct process *p,
		       struct tracee *t)
{
	struct tracee *v = tracee_find(pt, p->view_tid);

	if (!v || v->proc != p || v->exit_stopped)
		p->view_tid = t->tid;
}

static struct tracee *tracee_add(struct proc_table *pt, pid_t tid,
				 const struct proc_status *st)
{
	struct tracee *t = xcalloc(1, sizeof(*t));
	struct process *p = pidmap_get(&pt->processes, st->tgid);

	t->tid = tid;
	t->start_us = now_realtime_us();
	t->owner = pt->owner;
	t->tracer_tid = st->tracer_pid;
	t->fresh = true;
	if (!p)
		p = process_new(pt, st->tgid, st->ppid);
	add_thread(pt, p, t);
	adopt_view(pt, p, t);
	return t;
}

struct tracee *tracee_get(struct proc_table *pt, pid_t tid, pid_t parent_tgid)
{
	struct tracee *t = tracee_find(pt, tid);
	struct proc_status st;

	if (t)
		return t;
	/* One read says whether it is a thread and who its parent is, in
	 * whichever order the child's stop and the parent's event came. */
	if (read_task_status(pt->procfd, tid, 0, &st) < 0) {
		st.tgid = tid;
		st.ppid = parent_tgid;
	}
	return tracee_add(pt, tid, &st);
}

/*
 * Whether a thread of tgid, child of ppid, can be what a fork, vfork or
 * clone of the parent created: a thread of the parent, its child, or its
 * sibling (CLONE_PARENT).  The parent's parent is read again if need be:
 * it may have been re-parented (to us, the subreaper) since it was seen.
 */
static bool made_by(struct proc_table *pt, pid_t tgid, pid_t ppid,
		    const struct process *parent)
{
	struct proc_status now;

	if (tgid == parent->rec.pid || ppid == parent->rec.pid ||
	    ppid == parent->rec.ppid)
		return true;
	return read_task_status(pt->procfd, parent->rec.pid, 0, &now) == 0 &&
	       ppid == now.ppid;
}

struct tracee *tracee_get_child(struct proc_table *pt, pid_t tid,
				const struct process *parent)
{
	struct tracee *t = tracee_find(pt, tid);
	struct proc_status st;

	if (t)
		return made_by(pt, t->proc->rec.pid, t->proc->rec.ppid,
			       parent) ?
			       t :
			       NULL;
	if (read_task_status(pt->procfd, tid, 0, &st) < 0 ||
	    st.tracer_pid != pt->tracer_tid)
		return NULL;
	return tracee_add_child(pt, tid, parent, &st);
}

struct tracee *tracee_add_child(struct proc_table *pt, pid_t tid,
				const struct process *parent,
				const struct proc_status *st)
{
	if (!made_by(pt, st->tgid, st->ppid, parent))
		return NULL;
	return tracee_add(pt, tid, st);
}

/* The thread whose /proc entry shows p's descriptors is ending: another
 * live one's shows them from now on (any: they share them). */
static void move_view(struct process *p, const struct tracee *ending)
{
	if (ending->tid != p->view_tid)
		return;
	for (struct tracee *o = p->threads; o; o = o->next) {
		if (o != ending && !o->exit_stopped) {
			p->view_tid = o->tid;
			return;
		}
	}
}

static void unlink_thread(struct process *p, struct tracee *t)
{
	for (struct tracee **pp = &p->threads; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			return;
		}
	}
}

struct process *tracee_drop(struct proc_table *pt, struct tracee *t)
{
	struct process *p = t->proc;

	move_view(p, t);
	unlink_thread(p, t);
	pidmap_remove(&pt->tracees, t->tid);
	if (!t->exit_stopped) {
		p->live_threads--;
		p->thread_unmeasured = true;
		if (!t->io_counted)
			p->threads_io_lost = true;
	}
	tracee_end(pt, t, t->tid);
	return p;
}

/* After an exec what was there is stale: drop it if /proc cannot say.
 * At the end of a process that never execed, it is its parent's program,
 * the best there is. */
static void read_exe_argv(struct proc_table *pt, struct process *p,
			  bool keep_if_unread)
{
	if (read_proc_link(pt->procfd, p->rec.pid, "exe", &p->exe) < 0 &&
	    !keep_if_unread)
		sb_reset(&p->exe);
	if (read_proc_cmdline(pt->procfd, p->rec.pid, pt->cmdline_buf,
			      CMDLINE_BUF_SIZE, &p->argv) < 0 &&
	    !keep_if_unread)
		sb_reset(&p->argv);
}

void process_exec(struct proc_table *pt, struct tracee *t, pid_t former_tid)
{
	struct process *p = t->proc;

	/*
	 * A non-leader thread that calls execve takes over the leader's tid;
	 * every other thread is gone by now (each had its exit stop).  The
	 * tracee of the leader's tid stands for the execing thread from here.
	 */
	if (former_tid != t->tid) {
		struct tracee *former = tracee_find(pt, former_tid);

		if (former && former->proc == p) {
			/* Its execve exit stop comes on the leader's tid. */
			free(t->call.entry_path);
			t->call = former->call;
			t->intr_code = 0; /* the leader's, dead */
			t->intr_stepping = false;
			former->call.entry_path = NULL; /* t's now */
			fdtable_put(t->fds);
			t->fds = former->fds; /* the table the exec keeps */
			former->fds = NULL;
			unlink_thread(p, former);
			pidmap_remove(&pt->tracees, former_tid);
			former->end_us = now_realtime_us();
			tracee_end(pt, former, former_tid);
		}
		/* The others were killed, maybe with no exit stop of their
		 * own: their deaths must not count against the live one. */
		for (struct tracee *o = p->threads; o; o = o->next) {
			if (!o->exit_stopped && !o->io_counted)
				p->threads_io_lost = true;
			o->exit_stopped = true;
		}
		t->exit_stopped = false;
		/* The leader's was, not this thread's. */
		t->io_counted = false;
		memset(&t->io_seen, 0, sizeof(t->io_seen));
		p->live_threads = 1;
	}
	p->view_tid = p->rec.pid; /* the execing thread has its id now */
	p->rec.execs++;
	read_exe_argv(pt, p, false);
}

void process_forked(struct process *child, struct process *parent)
{
	if (child->rec.execs > 0 || child->exe.len > 0 || child->argv.len > 0)
		return;
	sb_adds(&child->exe, sb_str(&parent->exe));
	sb_adds(&child->argv, sb_str(&parent->argv));
}

/*
 * Per thread: context switches, and the peaks of the shared mm.  The
 * leader's /proc/PID/status is its own thread's: for the usual one-thread
 * process that spares the task/TID lookups (every /proc entry of a new
 * pid costs a dentry and an inode, most of what measuring it costs).
 */
static void measure_thread(struct proc_table *pt, struct process *p, pid_t tid)
{
	struct proc_usage *u = &p->rec.usage;
	struct proc_status st;

	if (read_task_status(pt->procfd, p->rec.pid,
			     tid == p->rec.pid ? 0 : tid, &st) < 0) {
		p->thread_unmeasured = true;
		return;
	}
	u->ctxt_voluntary += st.ctxt_voluntary;
	u->ctxt_involuntary += st.ctxt_involuntary;
	if (st.vmhwm_kib > u->vmhwm_kib)
		u->vmhwm_kib = st.vmhwm_kib;
	if (st.vmpeak_kib > u->vmpeak_kib)
		u->vmpeak_kib = st.vmpeak_kib;
}

/* Splits the exact CPU time by the kernel's tick-based user/system ratio,
 * as the kernel itself does for getrusage (cputime_adjust). */
static void split_cpu_time(struct proc_usage *u, const struct proc_stat *st)
{
	uint64_t ticks = st->utime_ticks + st->stime_ticks;
	uint64_t tick_ns = 1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
	uint64_t total_us;

	/* The clock unread (0) or short of the ticks by more than a tick
	 * per thread: the ticks are the better floor. */
	if (ticks * tick_ns > u->cpu_ns + tick_ns * st->num_threads)
		u->cpu_ns = ticks * tick_ns;
	total_us = u->cpu_ns / 1000;
	if (ticks == 0) {
		u->utime_us = total_us;
		u->stime_us = 0;
		return;
	}
	u->utime_us = (uint64_t)((double)total_us * (double)st->utime_ticks /
				 (double)ticks);
	u->stime_us = total_us - u->utime_us;
}

static void read_cgroup(struct proc_table *pt, struct process *p)
{
	struct cgroup_entry cg;

	if (read_proc_cgroup(pt->procfd, p->view_tid, pt->cgroups->has_v2,
			     &cg) < 0)
		return;
	sb_reset(&p->cgroup_path);
	sb_adds(&p->cgroup_path, cg.path);
	p->rec.cgroup_id = cgroup_resolve_id(pt->cgroups, &cg);
}

static void add_io(struct proc_io *sum, const struct proc_io *io)
{
	sum->rchar += io->rchar;
	sum->wchar += io->wchar;
	sum->syscr += io->syscr;
	sum->syscw += io->syscw;
	sum->read_bytes += io->read_bytes;
	sum->write_bytes += io->write_bytes;
	sum->cancelled_write_bytes += io->cancelled_write_bytes;
}

static void subtract_io(struct proc_io *io, const struct proc_io *less)
{
	io->rchar = u64_minus(io->rchar, less->rchar);
	io->wchar = u64_minus(io->wchar, less->wchar);
	io->syscr = u64_minus(io->syscr, less->syscr);
	io->syscw = u64_minus(io->syscw, less->syscw);
	io->read_bytes = u64_minus(io->read_bytes, less->read_bytes);
	io->write_bytes = u64_minus(io->write_bytes, less->write_bytes);
	io->cancelled_write_bytes = u64_minus(io->cancelled_write_bytes,
					      less->cancelled_write_bytes);
}

/*
 * A thread's own I/O, /proc/PID/task/TID/io, into the process's sum: at
 * its exit stop or at the end of its process.  One read before its exit
 * stop (exit_group's caller's end measures the process while the others
 * may still be in a call) is replaced by the one at its exit stop.
 */
static void count_thread_io(struct proc_table *pt, struct process *p,
			    struct tracee *t)
{
	struct proc_io io;

	if (t->io_counted && (t->io_final || !t->exit_stopped))
		return;
	t->io_final = t->exit_stopped;
	if (read_task_io(pt->procfd, p->rec.pid, t->tid, &io) < 0) {
		if (!t->io_counted)
			p->threads_io_lost = true;
		t->io_counted = true;
		return;
	}
	subtract_io(&p->threads_io, &t->io_seen);
	add_io(&p->threads_io, &io);
	t->io_seen = io;
	t->io_counted = true;
}

/*
 * What the kernel adds to the parent's /proc/PID/io if the parent reaps
 * p: all of p's, its reaped children's too.  Kept for own_io's fallback
 * only, which needs a thread gone unread: a process with one thread has
 * none (its thread's end is its own), so a shell that runs a million
 * commands keeps no list.
 */
static void hand_io_to_parent(struct proc_table *pt, struct process *p,
			      const struct proc_io *io,
			      uint64_t starttime_ticks)
{
	struct process *parent = pidmap_get(&pt->processes, p->rec.ppid);
	struct child_io *c;

	if (!parent || parent == p || parent->rec.usage.threads < 2)
		return;
	if (parent->nchildren == parent->children_alloc) {
		parent->children_alloc = parent->children_alloc * 2 + 8;
		parent->children = xrealloc(parent->children,
					    parent->children_alloc *
						    sizeof(*parent->children));
	}
	c = &parent->children[parent->nchildren++];
	c->pid = p->rec.pid;
	c->starttime_ticks = starttime_ticks;
	c->io = *io;
}

/* The parent's copy of p's I/O (hand_io_to_parent), if it keeps one. */
static void update_parents_copy(struct proc_table *pt, struct process *p,
				const struct proc_io *io,
				uint64_t starttime_ticks)
{
	struct process *parent = pidmap_get(&pt->processes, p->rec.ppid);

	for (size_t i = 0; parent && parent != p && i < parent->nchildren; i++)
		if (parent->children[i].pid == p->rec.pid &&
		    parent->children[i].starttime_ticks == starttime_ticks)
			parent->children[i].io = *io;
}

/* A child still there (alive, or a zombie no one reaped) is that child,
 * not a later process given its pid, if it started when the child did. */
static bool child_unreaped(struct proc_table *pt, const struct child_io *c)
{
	struct proc_stat st;

	return read_proc_stat(pt->procfd, c->pid, &st) == 0 &&
	       st.starttime_ticks == c->starttime_ticks;
}

static void subtract_reaped_children(struct proc_table *pt, struct process *p,
				     struct proc_io *io)
{
	for (size_t i = 0; i < p->nchildren; i++)
		if (!child_unreaped(pt, &p->children[i]))
			subtract_io(io, &p->children[i].io);
}

/*
 * procs.csv holds each process's own I/O.  /proc/PID/io is that only for
 * a process that never had a child: the kernel adds a child's counters
 * (with its own reaped descendants') to its parent's when the parent
 * reaps it, and never when the kernel reaps it for the parent (SIGCHLD
 * ignored, SA_NOCLDWAIT).  So for a parent, the own figures are the sum
 * of its threads' own (/proc/PID/task/TID/io, which leaves both out),
 * each read at its exit stop or now.  If a thread was gone unread (killed
 * with no exit stop), /proc/PID/io less the children that are gone:
 * wrong only for an auto-reaped one.
 */
static void own_io(struct proc_table *pt, struct process *p, struct proc_io *io)
{
	if (!p->had_children)
		return;
	for (struct tracee *t = p->threads; t; t = t->next)
		count_thread_io(pt, p, t);
	if (!p->threads_io_lost)
		*io = p->threads_io;
	else
		subtract_reaped_children(pt, p, io);
}

static void set_io(struct proc_usage *u, const struct proc_io *io)
{
	u->rchar = io->rchar;
	u->wchar = io->wchar;
	u->syscr = io->syscr;
	u->syscw = io->syscw;
	u->read_bytes = io->read_bytes;
	u->write_bytes = io->write_bytes;
	u->cancelled_write_bytes = io->cancelled_write_bytes;
}

/* CPU time (exact, threads without an exit stop included) and faults. */
static bool read_cpu(struct proc_table *pt, struct process *p,
		     struct proc_stat *st)
{
	struct proc_usage *u = &p->rec.usage;

	if (read_process_clock_ns(p->rec.pid, PROCESS_CLOCK_SCHED, &u->cpu_ns) <
	    0)
		u->cpu_ns = 0;
	if (read_proc_stat(pt->procfd, p->rec.pid, st) < 0)
		return false;
	u->minflt = st->minflt;
	u->majflt = st->majflt;
	split_cpu_time(u, st);
	return true;
}

/* Process-wide figures: /proc/TGID sums the threads, dead ones too. */
static void measure_process(struct proc_table *pt, struct process *p)
{
	struct proc_usage *u = &p->rec.usage;
	struct proc_stat st;
	struct proc_io io;

	if (!read_cpu(pt, p, &st))
		return;
	if (read_task_io(pt->procfd, p->rec.pid, 0, &io) == 0) {
		hand_io_to_parent(pt, p, &io, st.starttime_ticks);
		own_io(pt, p, &io);
		set_io(u, &io);
		u->io_known = true;
	}
	read_cgroup(pt, p);
	if (read_proc_link(pt->procfd, p->view_tid, "cwd", &p->cwd) < 0)
		sb_reset(&p->cwd);
	if (p->rec.execs == 0)
		read_exe_argv(pt, p, true);
	u->measured = true;
}

/*
 * exit_group measured p at its caller's exit stop, while its other
 * threads may still have been finishing a call (a write the exit cut
 * short counts when it returns): at the last one's exit stop its CPU time
 * and I/O are read again, and the parent's copy replaced, not added to.
 */
static void remeasure_process(struct proc_table *pt, struct process *p)
{
	struct proc_stat st;
	struct proc_io io;

	if (!p->rec.usage.measured || !read_cpu(pt, p, &st) ||
	    read_task_io(pt->procfd, p->rec.pid, 0, &io) < 0)
		return;
	update_parents_copy(pt, p, &io, st.starttime_ticks);
	own_io(pt, p, &io);
	set_io(&p->rec.usage, &io);
}

/* exit_group's number in each personality (x32's with its bit). */
#define NR_EXIT_GROUP_X86_64 231L
#define NR_EXIT_GROUP_X32 (0x40000000L | 231L)
#define NR_EXIT_GROUP_I386 252L

/*
 * Whether the thread at its exit stop takes its whole thread group with
 * it: it called exit_group, or a fatal signal ends the group.  Its exit
 * code says the latter (the signal, with 0x80 for a core; an exit status
 * is shifted left); the syscall it is in, read in its own personality
 * (x86_64's 252 is ioprio_get, i386's 231 fgetxattr), says the former.
 * The tracer is an x86_64 program: orig_rax holds the number for all three.
 */
static bool exit_ends_thread_group(pid_t tid)
{
	struct ptrace_syscall_info si;
	unsigned long code = 0;
	long nr;

	if (ptrace(PTRACE_GETEVENTMSG, tid, 0L, &code) == 0 && (code & 0x7f))
		return true;
	errno = 0;
	nr = ptrace(PTRACE_PEEKUSER, tid,
		    (long)offsetof(struct user_regs_struct, orig_rax), 0L);
	/* Most threads leave by exit: no personality to read then. */
	if (errno != 0 ||
	    (nr != NR_EXIT_GROUP_X86_64 && nr != NR_EXIT_GROUP_X32 &&
	     nr != NR_EXIT_GROUP_I386) ||
	    !tracee_syscall_info(tid, &si))
		return false;
	if (si.arch == AUDIT_ARCH_I386)
		return nr == NR_EXIT_GROUP_I386;
	return si.arch == AUDIT_ARCH_X86_64 &&
	       (nr == NR_EXIT_GROUP_X86_64 || nr == NR_EXIT_GROUP_X32);
}

bool process_exit_stop(struct proc_table *pt, struct tracee *t)
{
	struct process *p = t->proc;

	if (t->exit_stopped)
		return false;
	t->end_us = now_realtime_us();
	move_view(p, t);
	t->exit_stopped = true;
	measure_thread(pt, p, t->tid);
	/* Its own I/O: what /proc/PID/io alone cannot tell (own_io). */
	if (p->rec.usage.threads > 1 || p->had_children)
		count_thread_io(pt, p, t);
	if (--p->live_threads > 0 && !exit_ends_thread_group(t->tid))
		return false;
	if (p->final_read) {
		/* Measured at exit_group's caller's end: again at the last
		 * thread's, never handing its I/O to the parent twice. */
		if (p->live_threads > 0)
			return false;
		remeasure_process(pt, p);
		p->rec.end_us = now_realtime_us();
		return true;
	}
	measure_process(pt, p);
	p->final_read = true;
	p->rec.end_us = now_realtime_us();
	return true;
}

void process_read_running(struct proc_table *pt, struct process *p)
{
	/* Measured at a thread's end of the group already: once only. */
	if (p->final_read)
		return;
	for (struct tracee *t = p->threads; t; t = t->next)
		if (!t->exit_stopped)
			measure_thread(pt, p, t->tid);
	measure_process(pt, p);
	p->final_read = true;
}
