// SPDX-License-Identifier: MIT
#include "tracer.h"

#include <errno.h>
#include <linux/audit.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cpufollow.h"
#include "fdtable.h"
#include "inject.h"
#include "iotrace.h"
#include "probe.h"
#include "process.h"
#include "procfs.h"
#include "signals.h"
#include "tracee_mem.h"
#include "util.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

#define TRACE_OPTIONS                                                     \
	(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | \
	 PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)

#define SYSCALL_STOP (SIGTRAP | 0x80)

struct spin {
	long window_us; /* 0: never poll */
	unsigned backoff, skip;
};

struct tracer {
	struct spin spin;
	struct cpu_follow follow;
	const struct tracer_config *cfg;
	struct tracer_result *result;
	struct proc_table table;
	pid_t main_pid;
	bool io_on; /* a seccomp filter sends syscall stops */
	bool seccomp_before_sysentry;
	bool scoped; /* the task runs under the descriptor-scoped filter */
	bool main_execed;
	struct iotrace io;
};

int tracer_seize(pid_t pid, enum trace_level level)
{
	long options = TRACE_OPTIONS;

	if (level != LEVEL_SUMMARY)
		options |= PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD;
	if (ptrace(PTRACE_SEIZE, pid, 0L, options) < 0)
		return -errno;
	return 0;
}

/*
 * Resumes a stopped tracee; ESRCH means it died meanwhile (SIGKILL).  In
 * a traced syscall whose exit we want, PTRACE_SYSCALL stops it there.
 */
static void resume(struct tracee *t, int sig)
{
	ptrace(t->call.active ? PTRACE_SYSCALL : PTRACE_CONT, t->tid, 0L,
	       (long)sig);
}

/*
 * t's traced call is over without a decoded exit (or t is going): a
 * tracee held behind it at its entry stop goes on.
 */
static void end_call(struct tracer *tr, struct tracee *t)
{
	struct tracee *next = tr->io_on ? iotrace_call_over(&tr->io, t) : NULL;

	if (next)
		resume(next, 0);
}

static void finish_process(struct tracer *tr, struct process *p, int status)
{
	struct proc_record *rec = &p->rec;

	if (status < 0) {
		/* detached or lost: no exit status */
	} else if (WIFEXITED(status)) {
		rec->end = PROC_EXITED;
		rec->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		rec->end = PROC_EXITED;
		rec->exit_signal = WTERMSIG(status);
		rec->core_dumped = WCOREDUMP(status);
	}
	if (!rec->end_us)
		rec->end_us = now_realtime_us();
	rec->exe = sb_str(&p->exe);
	rec->argv = sb_str(&p->argv);
	rec->cwd = sb_str(&p->cwd);
	rec->cgroup_path = sb_str(&p->cgroup_path);
	if (p->thread_unmeasured && !p->final_read)
		rec->usage.measured = false;
	rec->usage.io_traced = tr->cfg->level == LEVEL_FULL;
	trace_proc(tr->cfg->sink, rec);
	/* Threads whose death never came (none, unless the kernel lost
	 * it) may not keep others waiting. */
	for (struct tracee *t = p->threads; t; t = t->next)
		end_call(tr, t);
	process_free(&tr->table, p);
}

static void handle_death(struct tracer *tr, pid_t tid, int status)
{
	struct tracee *t = tracee_find(&tr->table, tid);
	struct process *p;

	if (tid == tr->main_pid) {
		tr->result->main_reaped = true;
		tr->result->main_status = status;
		tr->result->main_end_us = now_realtime_us();
	}
	/* Unknown: an untraced child reparented to us, the subreaper. */
	if (!t)
		return;
	end_call(tr, t);
	p = tracee_drop(&tr->table, t);
	/* The leader is reported last, once every thread is gone. */
	if (tid == p->rec.pid)
		finish_process(tr, p, status);
}

/*
 * Ctrl-Z stopped the task.  The shell waits for iowrap, not for the task,
 * so iowrap stops too; the shell's SIGCONT to the job wakes both.  Only
 * when the job is in a terminal's foreground: a task stopped and continued
 * by kill(1) must not leave iowrap stopped behind it.
 */
static void follow_job_stop(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old;

	if (sig == SIGSTOP || !isatty(STDIN_FILENO) ||
	    tcgetpgrp(STDIN_FILENO) != getpgrp())
		return;
	sigaction(sig, &dfl, &old);
	raise(sig);
	sigaction(sig, &old, NULL);
}

static void handle_event_stop(struct tracer *tr, struct tracee *t, int sig)
{
	/*
	 * Seized tracees report a group-stop as PTRACE_EVENT_STOP with the
	 * stopping signal; the first stop of an auto-attached child and
	 * PTRACE_INTERRUPT come with SIGTRAP.  PTRACE_LISTEN keeps a
	 * group-stop stopped without swallowing it, so SIGCONT ends it.
	 */
	if (is_stop_signal(sig)) {
		ptrace(PTRACE_LISTEN, t->tid, 0L, 0L);
		if (t->tid == tr->main_pid)
			follow_job_stop(sig);
		return;
	}
	resume(t, 0);
}

static void handle_stop(struct tracer *tr, pid_t tid, int status);

static bool native_call(const struct tracee *t)
{
	return t->call.arch == AUDIT_ARCH_X86_64 && !t->call.x32;
}

/*
 * Adds the filter t's process lacks for the traced files its descriptor
 * table has held (fdfilter.h), before it runs on: at a syscall-exit stop,
 * or at_entry before the call (clone) runs.  False if t stopped for good
 * or died meanwhile: that stop was handled here and t may be gone.
 */
static bool sync_scope(struct tracer *tr, struct tracee *t, bool at_entry)
{
	struct process *p = t->proc;
	static const struct fd_numbers none;
	struct fd_plan plan;
	struct inject_out out;
	enum inject_result r;
	pid_t tid = t->tid;

	if (!tr->scoped || !native_call(t) ||
	    !fdscope_plan(&p->scope, p->fds ? &p->fds->traced : &none, &plan))
		return true;
	r = inject_filter(tid, at_entry, plan.code, (size_t)plan.len,
			  &p->inject_page, &out);
	tr->io.syscall_stops += out.stops;
	if (r == INJECT_GONE || r == INJECT_STOPPED) {
		/* Not handled here: a stop the thread made meanwhile (the
		 * filter is tried again at a later exit stop), its end. */
		if (out.status == -1)
			return false;
		if (WIFSTOPPED(out.status))
			handle_stop(tr, tid, out.status);
		else
			handle_death(tr, tid, out.status);
		return false;
	}
	if (r == INJECT_FAILED && fdscope_may_retry(&p->scope, out.err))
		return true; /* at a later exit stop */
	fdscope_done(&p->scope, &plan, r == INJECT_DONE);
	if (r == INJECT_DONE)
		tr->result->fd_filters++;
	else
		tr->result->fd_filter_failures++;
	return true;
}

/* A call that must find the process's filters complete when it runs:
 * a second process on the same fd table, a filter of the task's own
 * (which could refuse the tracer's later ones). */
static bool needs_scope_first(const struct tracee *t)
{
	switch (t->call.id) {
	case SC_CLONE:
	case SC_CLONE3:
	case SC_SECCOMP:
	case SC_PRCTL_SECCOMP:
		return true;
	default:
		return false;
	}
}

/*
 * Whether a filter may be added at t's exit stop: not after an exec (the
 * registers are the new program's, with no syscall instruction right
 * behind them to go back to), nor at a call interrupted by a signal (the
 * kernel may have a signal mask to put back, which PTRACE_SETSIGMASK
 * would drop): the next exit stop will do.
 */
static bool may_add_filter_at_exit(const struct tracee *t, int64_t ret)
{
	if (t->call.id == SC_EXECVE || t->call.id == SC_EXECVEAT)
		return false;
	return ret != -EINTR && !(ret <= -512 && ret >= -516);
}

/*
 * A filter of the task's own installed through the i386 or x32 syscalls,
 * where the tracer adds none: it could kill or refuse every later one,
 * so the process (and what it forks) gets no more, and the trace says
 * it may miss reads and writes.
 */
static void give_up_scope(struct tracer *tr, struct tracee *t)
{
	struct fd_scope *s = &t->proc->scope;

	if (s->all || s->gave_up ||
	    (t->call.id != SC_SECCOMP && t->call.id != SC_PRCTL_SECCOMP))
		return;
	s->gave_up = true;
	tr->result->fd_filter_failures++;
}

static void handle_seccomp_stop(struct tracer *tr, struct tracee *t)
{
	struct ptrace_syscall_info si;
	enum entry_next next = ENTRY_RESUME;

	if (tr->io_on && tracee_syscall_info(t->tid, &si) &&
	    si.op == PTRACE_SYSCALL_INFO_SECCOMP)
		next = iotrace_entry(&tr->io, t, &si);
	if (next == ENTRY_RESUME && tr->scoped && needs_scope_first(t)) {
		if (!native_call(t))
			give_up_scope(tr, t);
		else if (!sync_scope(tr, t, true))
			return;
	}
	if (next != ENTRY_RESUME) {
		t->call.active = true;
		t->call.skip_entry = tr->seccomp_before_sysentry;
	}
	/* Held: end_call() or the exit of the call before resumes it. */
	if (next != ENTRY_HOLD)
		resume(t, 0);
}

static void handle_syscall_stop(struct tracer *tr, struct tracee *t)
{
	struct ptrace_syscall_info si;
	struct tracee *next = NULL;
	bool decoded = false, here = true;

	if (t->call.skip_entry) {
		/* Kernels < 4.8: the syscall-enter-stop after the seccomp stop. */
		t->call.skip_entry = false;
		resume(t, 0);
		return;
	}

	if (t->call.active && tracee_syscall_info(t->tid, &si) &&
	    si.op == PTRACE_SYSCALL_INFO_EXIT) {
		next = iotrace_exit(&tr->io, t, &si);
		decoded = true;
	} else {
		end_call(tr, t);
	}
	t->call.active = false;
	if (decoded && may_add_filter_at_exit(t, si.exit.rval))
		here = sync_scope(tr, t, false);
	if (here)
		resume(t, 0);
	if (next)
		resume(next, 0);
}

/* A thread's seccomp filters, 0 if its status cannot be read. */
static uint64_t filters_of(struct tracer *tr, pid_t pid, pid_t tid)
{
	struct proc_status st;

	if (read_task_status(tr->table.procfd, pid, tid == pid ? 0 : tid, &st) <
	    0)
		return 0;
	return st.seccomp_filters;
}

/*
 * A forked child has its parent's filters, and its memory (a copy, or the
 * same): the page filters are written to.  Unless a filter went in while
 * the fork ran (TSYNC from another thread: the child may have been
 * copied before it), which the kernel's count of filters tells; such a
 * child is given a filter for every descriptor.
 */
static void inherit_scope(struct tracer *tr, const struct tracee *parent,
			  struct process *child)
{
	struct process *p = parent->proc;

	fdscope_inherit(&child->scope, &p->scope);
	if (!child->rec.execs && !child->inject_page)
		child->inject_page = p->inject_page;
	if (tr->scoped && p->live_threads > 1 &&
	    filters_of(tr, child->rec.pid, 0) <
		    filters_of(tr, p->rec.pid, parent->tid)) {
		child->scope.fds = (struct fd_numbers){ .low = 0 };
		child->scope.all = false;
		child->scope.want_all = true;
	}
}

/*
 * The task's first exec: its filter is in place.  The scoped one is the
 * one installed under NO_NEW_PRIVS (filter_install), at --level full.
 */
static void start_scope(struct tracer *tr, struct process *main)
{
	struct proc_status st;

	tr->main_execed = true;
	/* Unreadable: scoped, to be sure (filters added to a plain one only
	 * add stops). */
	tr->scoped = tr->cfg->level == LEVEL_FULL &&
		     (read_task_status(tr->table.procfd, main->rec.pid, 0,
				       &st) < 0 ||
		      st.no_new_privs);
	tr->result->fd_scoped = tr->scoped;
	main->scope.fds = tr->cfg->inherited;
	main->scope.all = tr->cfg->inherited.overflow;
}

static void handle_stop(struct tracer *tr, pid_t tid, int status)
{
	struct tracee *t = tracee_get(&tr->table, tid, 0);
	unsigned long msg = 0;
	int sig = WSTOPSIG(status);

	if (sig == SYSCALL_STOP) {
		handle_syscall_stop(tr, t);
		return;
	}
	switch ((unsigned)status >> 16) {
	case PTRACE_EVENT_SECCOMP:
		handle_seccomp_stop(tr, t);
		return;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0L, &msg) == 0) {
			struct tracee *child = tracee_get_child(
				&tr->table, (pid_t)msg, t->proc);

			if (child && child->proc != t->proc) {
				process_forked(child->proc, t->proc);
				iotrace_fork(t->proc, child->proc);
				inherit_scope(tr, t, child->proc);
			}
		}
		resume(t, 0);
		return;
	case PTRACE_EVENT_EXEC:
		/* A thread's exec ends the leader, maybe held: its tid is
		 * the execing thread's from here. */
		end_call(tr, t);
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0L, &msg) < 0)
			msg = (unsigned long)tid;
		process_exec(&tr->table, t, (pid_t)msg);
		t->proc->inject_page = 0; /* a new address space */
		if (!tr->main_execed && t->proc->rec.pid == tr->main_pid)
			start_scope(tr, t->proc);
		resume(t, 0);
		return;
	case PTRACE_EVENT_EXIT:
		if (process_exit_stop(&tr->table, t) && tr->io_on)
			iotrace_process_exit(&tr->io, t);
		resume(t, 0);
		return;
	case PTRACE_EVENT_STOP:
		handle_event_stop(tr, t, sig);
		return;
	}
	/* A signal-delivery-stop: deliver the signal as it was meant. */
	resume(t, sig);
}

/* Lets a stopped tracee go on untraced, with sig delivered. */
static void detach_one(struct tracer *tr, struct tracee *t, int sig)
{
	struct process *p = t->proc;

	if (p->rec.end != PROC_DETACHED) {
		process_read_running(&tr->table, p);
		p->rec.end = PROC_DETACHED;
		tr->result->orphans_detached++;
	}
	ptrace(PTRACE_DETACH, t->tid, 0L, (long)sig);
	t->exit_stopped = true;
	tracee_drop(&tr->table, t);
	if (!p->threads)
		finish_process(tr, p, -1);
}

/*
 * --no-wait-orphans: the rest of the tree runs on, untraced.  Only at
 * --level summary (no filter to leave behind), so no tracee is held at an
 * entry stop, where an interrupt would make it report nothing.
 */
static void detach_remaining(struct tracer *tr)
{
	struct pidmap *m = &tr->table.tracees;
	int status;
	pid_t tid;

	for (size_t i = 0; i <= m->mask; i++)
		if (m->slot[i].key)
			ptrace(PTRACE_INTERRUPT, m->slot[i].key, 0L, 0L);
	while (m->count > 0) {
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!WIFSTOPPED(status)) {
			handle_death(tr, tid, status);
			continue;
		}
		/* A child forked just now is ours too: detach it as well.
		 * A pending signal goes with it; an event stop has none. */
		detach_one(tr, tracee_get(&tr->table, tid, 0),
			   (status >> 16) == 0 ? WSTOPSIG(status) : 0);
	}
}

/* Processes whose end never reached us (none, unless the kernel lost it). */
static void finish_lost(struct tracer *tr)
{
	struct pidmap *m = &tr->table.processes;

	/* finish_process() removes from the map, which moves its slots. */
	while (m->count > 0) {
		size_t i = 0;

		while (!m->slot[i].key)
			i++;
		finish_process(tr, m->slot[i].value, -1);
	}
}

/*
 * The next stop or death.  Sleeping in waitpid costs a cross-CPU wake-up
 * at every stop, which on these VMs is most of a stop's cost (about 80 us
 * against 5 us on one CPU).  So the tracer first polls for a short window:
 * a syscall-heavy task stops again within microseconds and is caught
 * running.  A window that passes in vain (a task that computes between
 * stops) makes the tracer sleep at once for the next 1, 2, 4 ... 256 waits,
 * so it does not burn a CPU the task could use.
 */
static pid_t wait_next(struct spin *sp, struct cpu_follow *follow, int *status)
{
	pid_t tid = waitpid(-1, status, __WALL | WNOHANG);
	int64_t until;

	if (tid != 0) {
		if (sp->skip)
			sp->skip--;
		else
			sp->backoff = 0;
		return tid;
	}
	follow_missed(follow);
	if (sp->window_us <= 0 || sp->skip) {
		if (sp->skip)
			sp->skip--;
		return waitpid(-1, status, __WALL);
	}
	until = now_monotonic_us() + sp->window_us;
	do {
		tid = waitpid(-1, status, __WALL | WNOHANG);
		if (tid != 0) {
			sp->backoff = 0;
			return tid;
		}
	} while (now_monotonic_us() < until);
	sp->backoff = sp->backoff ? sp->backoff * 2 : 1;
	if (sp->backoff > 256)
		sp->backoff = 256;
	sp->skip = sp->backoff;
	return waitpid(-1, status, __WALL);
}

/* Polling only helps when the task can run on another CPU meanwhile. */
static void spin_init(struct spin *sp, long window_us)
{
	cpu_set_t cpus;

	memset(sp, 0, sizeof(*sp));
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 &&
	    CPU_COUNT(&cpus) > 1)
		sp->window_us = window_us;
}

static bool is_exec_stop(int status)
{
	return (unsigned)status >> 16 == PTRACE_EVENT_EXEC;
}

static bool main_gone(const struct tracer *tr)
{
	return tr->result->main_reaped;
}

int tracer_run(const struct tracer_config *cfg, pid_t main_pid,
	       struct tracer_result *result)
{
	struct tracer tr = { .cfg = cfg,
			     .result = result,
			     .main_pid = main_pid };
	int procfd = proc_open_root();
	int status;

	memset(result, 0, sizeof(*result));
	if (procfd < 0) {
		snprintf(result->error, sizeof(result->error),
			 "cannot open /proc: %s", strerror(errno));
		return -1;
	}
	proc_table_init(&tr.table, procfd, cfg->cgroups);
	spin_init(&tr.spin, cfg->spin_us);
	if (cfg->level != LEVEL_SUMMARY) {
		tr.io_on = true;
		tr.seccomp_before_sysentry = seccomp_stop_before_sysentry();
		iotrace_init(&tr.io, cfg->sink, procfd, main_pid, cfg->include,
			     cfg->exclude);
		tr.io.processes = &tr.table.processes;
		trace_open_io(cfg->sink);
	}
	follow_init(&tr.follow, procfd, tr.io_on && cfg->follow_cpu);
	tracee_get(&tr.table, main_pid, getpid());
	for (;;) {
		pid_t tid;

		if (*cfg->tick) {
			*cfg->tick = 0;
			trace_tick(cfg->sink);
		}
		if (!cfg->wait_orphans && main_gone(&tr)) {
			detach_remaining(&tr);
			break;
		}
		tid = wait_next(&tr.spin, &tr.follow, &status);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno != ECHILD)
				snprintf(result->error, sizeof(result->error),
					 "waitpid: %s", strerror(errno));
			break;
		}
		if (WIFSTOPPED(status)) {
			follow_stop(&tr.follow, tid, is_exec_stop(status));
			handle_stop(&tr, tid, status);
		} else
			handle_death(&tr, tid, status);
	}
	finish_lost(&tr);
	follow_release(&tr.follow);
	result->follow_phases = tr.follow.phases;
	result->follow_starved = tr.follow.starved;
	result->follow_moves = tr.follow.moves;
	result->max_concurrent = tr.table.max_live_processes;
	if (tr.io_on) {
		result->syscall_stops = tr.io.syscall_stops;
		result->unknown_syscalls = tr.io.unknown_syscalls;
		result->used_io_uring = tr.io.used_io_uring;
		iotrace_release(&tr.io);
	}
	proc_table_release(&tr.table);
	close(procfd);
	return result->error[0] ? -1 : 0;
}
