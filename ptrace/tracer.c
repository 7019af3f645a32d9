// SPDX-License-Identifier: MIT
#include "tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/audit.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <ucontext.h>
#include <unistd.h>

#include "cpufollow.h"
#include "fdtable.h"
#include "inject.h"
#include "iotrace.h"
#include "mailbox.h"
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
/* An injected call's stop not come after this long is reported. */
#define INJECT_SLOW_S 5

struct spin {
	long window_us; /* 0: never poll */
	unsigned backoff, skip;
};

/* A resume decided under the lock, made after it (see resume()). */
struct pending_resume {
	pid_t tid;
	int request; /* PTRACE_CONT, PTRACE_SYSCALL or PTRACE_SINGLESTEP */
	int sig;
	bool queued; /* from its entry stop, where it was queued */
};

/*
 * A tracer thread.  ptrace binds a tracee to the thread that attached it,
 * and the kernel attaches a child to its parent's; with more than one,
 * a new process may be handed to another (hand_over), so that tracees
 * on different CPUs are served by different threads (tracer.md).
 */
struct worker {
	int index;
	pid_t tid;
	struct pending_resume *resumes;
	size_t nresumes, resumes_alloc;
	struct spin spin;
	struct cpu_follow follow;
	struct mailbox box;
	pthread_t thread;
	struct tracer *tr;
	int held; /* its tracees held for their creator's event */
};

#define ENDED_REMEMBERED 256

struct tracer {
	/* Everything but the workers' own spin, follow and waitpid() is
	 * shared: a thread handles a stop under the lock. */
	pthread_mutex_t lock;
	struct worker workers[TRACER_MAX_THREADS];
	int nworkers;
	bool quit; /* the last tracee is gone: the workers stop */
	/* The tracee a filter is being added to, under the lock, and a stop
	 * of its that another thread's wait took (wait_injected). */
	atomic_int injecting;
	atomic_int stolen_status;
	atomic_bool stolen;
	bool handoffs; /* new processes may change thread */
	bool threads_missing; /* some tracer thread could not start */
	uint64_t base_filters; /* the main process's, after its first exec */
	const struct tracer_config *cfg;
	struct tracer_result *result;
	struct proc_table table;
	pid_t main_pid;
	bool io_on; /* a seccomp filter sends syscall stops */
	bool seccomp_before_sysentry;
	bool main_execed;
	bool injection_reported; /* report_slow_injection() */
	struct cpu_claims cpu_claims; /* cpufollow.h */
	struct iotrace io;
	/* The task's processes that ended last: a signal's sender may be
	 * gone by the time its signal is handled (sent_by_task). */
	pid_t ended[ENDED_REMEMBERED];
	unsigned ended_next;
};

static const char *const handover_names[] = { "busy", "always", "never" };

int handover_parse(const char *name)
{
	return index_of_name(handover_names, ARRAY_SIZE(handover_names), name);
}

const char *handover_name(enum handover h)
{
	return handover_names[h];
}

int tracer_seize(pid_t pid, enum trace_level level)
{
	long options = TRACE_OPTIONS;

	if (level != LEVEL_SUMMARY)
		options |= PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD;
	if (ptrace(PTRACE_SEIZE, pid, 0L, options) < 0)
		return -errno;
	return 0;
}

/* The tracer thread running this code. */
static __thread struct worker *self;

/*
 * Resumes a stopped tracee; ESRCH means it died meanwhile (SIGKILL).  In
 * a traced syscall whose exit we want, PTRACE_SYSCALL stops it there.
 * One bound to another tracer thread is resumed by that thread.  The
 * ptrace call itself waits until the tracer's lock is released
 * (resume_pending): a resumed tracee on the tracer's CPU preempts it at
 * once (SCHED_IDLE, cpufollow.h), and must not do so while it holds the
 * lock another tracer thread waits for.
 */
/* To its exit stop, one step into a signal's handler (interrupted
 * calls, below), or on. */
static int resume_request(const struct tracee *t)
{
	if (t->call.active)
		return PTRACE_SYSCALL;
	return t->intr_stepping ? PTRACE_SINGLESTEP : PTRACE_CONT;
}

static void resume(struct tracee *t, int sig)
{
	struct worker *w = self;

	t->fresh = false;
	if (t->owner != w->index) {
		struct mail m = { .kind = MAIL_RESUME,
				  .tid = t->tid,
				  .arg = sig };

		mailbox_post(&w->tr->workers[t->owner].box, &m);
		return;
	}
	if (w->nresumes == w->resumes_alloc) {
		w->resumes_alloc = w->resumes_alloc * 2 + 8;
		w->resumes = xrealloc(w->resumes,
				      w->resumes_alloc * sizeof(*w->resumes));
	}
	w->resumes[w->nresumes++] = (struct pending_resume){ t->tid,
							     resume_request(t),
							     sig, t->queued };
	t->queued = false;
}

/*
 * Whether t, reported at a syscall stop, has left it already: a SIGKILL
 * (another thread's exit_group or exec, a fatal signal) woke it after the
 * stop was reported, and it is on its way to its exit stop or in it,
 * where PTRACE_GET_SYSCALL_INFO finds no syscall.  known and si are that
 * call's outcome, errno its error.  Such a thread is not resumed: that
 * would let it go on from its exit stop before waitpid reported that
 * stop, which then never comes, and a call in flight is decoded there
 * (finish_killed_call).
 */
static bool left_the_stop(bool known, const struct ptrace_syscall_info *si)
{
	return known ? si->op == PTRACE_SYSCALL_INFO_NONE : errno == ESRCH;
}

/* Whether a thread queued at its entry stop has left it since
 * (left_the_stop; the kernel skipped its call). */
static bool queued_and_gone_on(const struct pending_resume *r)
{
	struct ptrace_syscall_info si;

	return r->queued &&
	       left_the_stop(tracee_syscall_info(r->tid, &si), &si);
}

/* The resumes decided under the lock, after it. */
static void resume_pending(struct worker *w)
{
	for (size_t i = 0; i < w->nresumes; i++)
		if (!queued_and_gone_on(&w->resumes[i]))
			ptrace(w->resumes[i].request, w->resumes[i].tid, 0L,
			       (long)w->resumes[i].sig);
	w->nresumes = 0;
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
	if (tr->io_on)
		iotrace_process_end(&tr->io, p);
	process_free(&tr->table, p);
}

static void release_orphaned(struct tracer *tr, pid_t pid, pid_t ppid);
static void write_interrupted(struct tracer *tr, struct tracee *t);

static void handle_death(struct tracer *tr, pid_t tid, int status)
{
	struct tracee *t = tracee_find(&tr->table, tid);
	struct process *p;

	follow_forget(&self->follow, tid, true);
	if (tid == tr->main_pid) {
		tr->result->main_reaped = true;
		signals_main_reaped();
		tr->result->main_status = status;
		tr->result->main_end_us = now_realtime_us();
	}
	/* Unknown: an untraced child reparented to us, the subreaper. */
	if (!t)
		return;
	if (t->held)
		self->held--;
	if (t->intr_code)
		write_interrupted(tr, t); /* interrupted, then killed */
	end_call(tr, t);
	p = tracee_drop(&tr->table, t);
	/* The leader is reported last, once every thread is gone. */
	if (tid == p->rec.pid) {
		pid_t ppid = p->rec.ppid;

		tr->ended[tr->ended_next++ % ENDED_REMEMBERED] = tid;
		finish_process(tr, p, status);
		release_orphaned(tr, tid, ppid);
	}
}

/*
 * Whether iowrap stops with its task, stopped by sig.  The shell waits for
 * iowrap, not for the task, so iowrap stops too, and the shell's SIGCONT
 * to the job wakes both.  Only as a job of a terminal, where a shell
 * waits: a task stopped and continued by pid (kill(1) from elsewhere, a
 * supervisor, its own helper) must not leave iowrap stopped behind it.
 * Ctrl-Z (SIGTSTP) and a SIGSTOP the task sent itself (kill -STOP $$) in
 * the terminal's foreground; SIGTTIN and SIGTTOU in the background, where
 * the terminal sends them: the shell must see the job stopped, or its fg
 * sends no SIGCONT and the task waits for ever.
 */
static bool stops_the_job(int sig, bool by_task)
{
	/* The controlling terminal, whatever iowrap's stdin is (a task that
	 * reads /dev/tty from the background under iowrap ... </dev/null &). */
	int tty =
		open("/dev/tty", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	bool foreground;

	if (tty < 0)
		return false;
	foreground = tcgetpgrp(tty) == getpgrp();
	close(tty);
	switch (sig) {
	case SIGSTOP:
		return by_task && foreground;
	case SIGTSTP:
		return foreground;
	default:
		return !foreground;
	}
}

static bool ended_lately(const struct tracer *tr, pid_t pid)
{
	for (unsigned i = 0; i < ENDED_REMEMBERED; i++)
		if (tr->ended[i] == pid)
			return true;
	return false;
}

/*
 * Whether the signal t is stopped to take was sent by a process of the
 * task (kill -STOP $$), not from elsewhere, nor by the kernel.  A short-
 * lived kill(1) may be gone by now: one of the last processes of the
 * task to end counts too (its pid reused by an outsider that sends a
 * SIGSTOP meanwhile is the only way to be wrong).
 */
static bool sent_by_task(struct tracer *tr, const struct tracee *t)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0L, &si) < 0 ||
	    (si.si_code != SI_USER && si.si_code != SI_TKILL &&
	     si.si_code != SI_QUEUE) ||
	    si.si_pid <= 0)
		return false;
	return tracee_find(&tr->table, si.si_pid) != NULL ||
	       ended_lately(tr, si.si_pid);
}

/* Whether p's group-stop by sig is the task's own SIGSTOP; the note is
 * used once, so an old one never stands for a later stop. */
static bool take_stop_sender(struct process *p, int sig)
{
	bool by_task = sig == SIGSTOP && p->stopped_by_task;

	p->stopped_by_task = false;
	return by_task;
}

static void follow_job_stop(int sig, bool by_task)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old;

	if (!stops_the_job(sig, by_task))
		return;
	if (sig == SIGSTOP) {
		raise(SIGSTOP); /* cannot be caught nor ignored */
		return;
	}
	sigaction(sig, &dfl, &old);
	raise(sig);
	sigaction(sig, &old, NULL);
}

/* A tracee that stopped this recently counts as busy: one that waits
 * for its children (make, a shell) does not stop. */
#define BUSY_US 5000

/* Whether busy tracee o counts against the tracer thread of fresh one:
 * a new process's parent usually waits for it, and the process itself
 * is new; a new thread's siblings go on. */
static bool counts_as_load(const struct tracee *o, const struct tracee *fresh)
{
	const struct process *p = fresh->proc;

	if (fresh->tid != p->rec.pid)
		return o != fresh;
	return o->proc != p && o->proc->rec.pid != p->rec.ppid;
}

/* The tracer thread with the fewest busy tracees (counts_as_load). */
static struct worker *least_loaded(struct tracer *tr,
				   const struct tracee *fresh)
{
	unsigned count[TRACER_MAX_THREADS] = { 0 };
	const struct pidmap *m = &tr->table.tracees;
	int64_t busy_since = now_monotonic_us() - BUSY_US;
	int best = self->index;

	for (size_t i = 0; i <= m->mask; i++) {
		const struct tracee *t = m->slot[i].value;

		if (m->slot[i].key && t->last_stop_us >= busy_since &&
		    counts_as_load(t, fresh))
			count[t->owner]++;
	}
	/* A thread whose doorbell could not be set up has stopped. */
	for (int w = 0; w < tr->nworkers; w++)
		if (tr->workers[w].box.doorbell > 0 && count[w] < count[best])
			best = w;
	return &tr->workers[best];
}

/* --handover always: the next tracer thread after this one that still
 * has a doorbell, or this one if none has. */
static struct worker *next_in_turn(struct tracer *tr)
{
	for (int i = 1; i < tr->nworkers; i++) {
		struct worker *w =
			&tr->workers[(self->index + i) % tr->nworkers];

		if (w->box.doorbell > 0)
			return w;
	}
	return self;
}

/* Whether p has only the filters the tracer knows of: none of its own,
 * which could refuse the ppoll a parked process sleeps in. */
static uint64_t filters_of(struct tracer *tr, pid_t pid, pid_t tid);

static bool only_our_filters(struct tracer *tr, const struct tracee *t)
{
	return filters_of(tr, t->proc->rec.pid, t->tid) ==
	       tr->base_filters + t->proc->scope.filters;
}

static bool is_exec_call(const struct tracee *t)
{
	return t->call.active &&
	       (t->call.id == SC_EXECVE || t->call.id == SC_EXECVEAT);
}

/*
 * An exec holds the process's cred_guard_mutex, which PTRACE_SEIZE needs,
 * while it waits for the other threads to end, and their exit stops need
 * their tracer threads: a seize of a sibling then would wait for ever.
 * So a thread is not handed over while one of its process is in an exec,
 * and an exec waits at its entry stop (before the kernel takes the mutex)
 * while a thread of its process is being handed over (release_execs).
 */
static bool exec_in(const struct process *p)
{
	for (const struct tracee *o = p->threads; o; o = o->next)
		if (is_exec_call(o))
			return true;
	return false;
}

static bool handing_in(const struct process *p)
{
	for (const struct tracee *o = p->threads; o; o = o->next)
		if (o->handing)
			return true;
	return false;
}

/* The execs held while p's threads were handed over go on. */
static void release_execs(struct process *p)
{
	if (handing_in(p))
		return;
	for (struct tracee *o = p->threads; o; o = o->next)
		if (o->exec_held) {
			o->exec_held = false;
			resume(o, 0);
		}
}

/* A new process (its only thread), or a new thread of a process. */
static bool may_change_thread(const struct tracer *tr, const struct tracee *t)
{
	const struct process *p = t->proc;

	if (!t->fresh || t->tid == tr->main_pid)
		return false;
	if (t->tid != p->rec.pid)
		return !exec_in(p);
	return p->threads == t && !t->next;
}

/*
 * A new process or thread at its first stop goes to the least busy tracer
 * thread, if that is another: parked (inject.h), detached, and taken over
 * there (take_over).  Its parked state is read with process_vm_readv,
 * which the kernel allows only where it would allow the seize: so the
 * seize cannot be refused, which would leave it parked.  The threads of a
 * process may so be on several tracer threads: see exec_owner.  True if
 * handed over.
 */
static bool hand_over(struct tracer *tr, struct tracee *t)
{
	struct mail m = { .kind = MAIL_TAKE, .tid = t->tid };
	struct worker *to;

	if (!tr->handoffs || !may_change_thread(tr, t))
		return false;
	to = tr->cfg->handover == HANDOVER_ALWAYS ? next_in_turn(tr) :
						    least_loaded(tr, t);
	if (to == self || !only_our_filters(tr, t) ||
	    inject_park(t->tid, &m.parked) < 0)
		return false;
	m.scans = signals_scans_finished();
	follow_forget(&self->follow, t->tid, false);
	if (ptrace(PTRACE_DETACH, t->tid, 0L, 0L) < 0) {
		inject_unpark(t->tid, &m.parked);
		return false;
	}
	t->owner = to->index;
	t->handing = true;
	tr->result->handoffs++;
	mailbox_post(&to->box, &m);
	return true;
}

/* A process handed to this thread, parked: seized, then interrupted, and
 * put back at that stop (restore_parked). */
static void take_over(struct tracer *tr, const struct mail *m)
{
	struct tracee *t = tracee_find(&tr->table, m->tid);
	struct process *p;

	if (!t || t->owner != self->index)
		return;
	t->handing = false;
	if (tracer_seize(m->tid, tr->cfg->level) < 0 ||
	    ptrace(PTRACE_INTERRUPT, m->tid, 0L, 0L) < 0) {
		/* Killed while parked: its death goes to its parent alone. */
		p = tracee_drop(&tr->table, t);
		if (!p->threads)
			finish_process(tr, p, -1);
		else
			release_execs(p);
		return;
	}
	if (t->tid == t->proc->rec.pid)
		signals_catch_up(t->tid, m->scans);
	t->parked = xmalloc(sizeof(*t->parked));
	*t->parked = m->parked;
	release_execs(t->proc);
}

/* The first stop under the new thread (the interrupt's, or a group stop
 * or signal that came first): the process is put back as it was. */
static void restore_parked(struct tracee *t)
{
	inject_unpark(t->tid, t->parked);
	free(t->parked);
	t->parked = NULL;
	t->fresh = false;
}

/* Its creator's event came: a held new process goes on from its first
 * stop as any other does. */
static void announce(struct tracer *tr, struct tracee *t)
{
	t->unannounced = false;
	if (!t->held)
		return;
	t->held = false;
	self->held--;
	if (!hand_over(tr, t))
		resume(t, 0);
}

/* Held t goes on, from whichever tracer thread holds it. */
static void release_held(struct tracer *tr, struct tracee *t)
{
	struct mail mail = { .kind = MAIL_ANNOUNCE, .tid = t->tid };

	if (t->owner == self->index) {
		announce(tr, t);
		return;
	}
	mailbox_post(&tr->workers[t->owner].box, &mail);
	t->release_mailed = true;
}

typedef bool (*hold_due_fn)(const struct tracee *t, const void *arg);

/* Each held tracee that due() picks goes on (release_held): how many.  A
 * walk of the table, and only while some tracee is held. */
static uint64_t release_holds(struct tracer *tr, hold_due_fn due,
			      const void *arg)
{
	struct pidmap *m = &tr->table.tracees;
	uint64_t released = 0;
	int held = 0;

	for (int w = 0; w < tr->nworkers; w++)
		held += tr->workers[w].held;
	for (size_t i = 0; held > 0 && i <= m->mask; i++) {
		struct tracee *c = m->slot[i].value;

		if (!m->slot[i].key || !c->held)
			continue;
		held--;
		if (c->release_mailed || !due(c, arg))
			continue;
		release_held(tr, c);
		released++;
	}
	return released;
}

/* fork, vfork, clone and clone3, as x86_64, x32 or i386 number them: a
 * call that may yet stop for a creation event.  Any ABI's number will do
 * (an x86_64 open, 2, taken for one only holds a child a while longer). */
static bool is_creation_call(long nr)
{
	switch (nr & ~0x40000000L) { /* __X32_SYSCALL_BIT */
	case 2: /* i386 fork */
	case 56: /* clone */
	case 57: /* fork */
	case 58: /* vfork */
	case 120: /* i386 clone */
	case 190: /* i386 vfork */
	case 435: /* clone3 */
		return true;
	}
	return false;
}

/* Whether thread tid of process pid is in a call that may make a child,
 * or may be: running (/proc says no more), or not to be read. */
static bool thread_may_create(int procfd, pid_t pid, pid_t tid)
{
	long nr;
	int err = read_task_syscall(procfd, pid, tid, &nr);

	if (err == -ENOENT || err == -ESRCH)
		return false; /* gone */
	return err != 0 || is_creation_call(nr);
}

/*
 * Whether a held process may still be announced by p's own creation
 * event: one of p's threads is making a child, or may be.  A creation
 * event comes before the call returns, so a process with no thread in
 * such a call has no child waiting for its event.  A thread that has not
 * run (fresh) is in no call of its own: its registers, and so its
 * syscall file, are its creator's, a clone's.
 */
static bool process_may_announce(const struct tracer *tr,
				 const struct process *p)
{
	/* Its exec's event lets its held children go (release_orphaned),
	 * and before Linux 5.7 a read of syscall waits for the exec's
	 * cred_guard_mutex, which may wait for this thread (exec_in). */
	if (exec_in(p))
		return true;
	for (const struct tracee *t = p->threads; t; t = t->next)
		if (!t->fresh &&
		    thread_may_create(tr->table.procfd, p->rec.pid, t->tid))
			return true;
	return false;
}

/* The same for process pid, if it is one of the task's. */
static bool may_announce_more(const struct tracer *tr, pid_t pid)
{
	const struct process *p = pidmap_get(&tr->table.processes, pid);

	return p && process_may_announce(tr, p);
}

struct kin {
	const struct tracer *tr;
	pid_t pid, ppid;
	int *siblings; /* ppid's held children go on too: -1 not known */
};

static bool child_of(const struct tracee *t, const void *arg)
{
	const struct kin *k = arg;

	if (t->proc->rec.ppid == k->pid)
		return true;
	if (t->proc->rec.ppid != k->ppid)
		return false;
	/* Asked once, and only where there is such a child. */
	if (*k->siblings < 0)
		*k->siblings = !may_announce_more(k->tr, k->ppid);
	return *k->siblings;
}

/*
 * A creator killed in its fork never stops for the event: its held
 * children go on when it is gone, with what is known of their
 * descriptors, whichever tracer thread holds them.  Its children, or its
 * siblings for clone(CLONE_PARENT): those whose parent is pid or ppid.
 * Not the siblings while ppid is itself making a child: a held child of
 * ppid then may be ppid's own, whose event is on its way, and which must
 * wait for it.  A child of slowfork released so (its sibling, ended by a
 * forwarded SIGTERM, died while slowfork was in the fork) went on without
 * the SIGTERM its creator had pending (signals_share_pending reaches only
 * a child that has not run), and iowrap waited for it for ever (2 runs
 * in 30 of test_sigterm_reaches_a_child_forked_while_it_came under load).
 * Such a sibling made by clone(CLONE_PARENT) while ppid runs goes on
 * at a flush tick where ppid is making none (release_unmade_holds).
 *
 * When its process is gone (SIGKILL, another thread's exit_group), or at
 * once at an exec by another thread, which kills it and lets the process
 * live on: no event can come for a held child of the process then (the
 * execing thread's own were seen before it could exec), and the child
 * would wait for ever, the new program maybe for it (tests/helpers/
 * forkexec.c: 1 to 3 runs in 100 hung so).
 */
static void release_orphaned(struct tracer *tr, pid_t pid, pid_t ppid)
{
	int siblings = -1;
	const struct kin k = { tr, pid, ppid, &siblings };

	release_holds(tr, child_of, &k);
}

static bool held_since_before(const struct tracee *t, const void *arg)
{
	return t->held_since_us <= *(const int64_t *)arg;
}

/*
 * Whether q may be a child of process ppid now: its recorded parent is
 * ppid, or is gone, so that q may have been reparented to ppid (a
 * subreaper of the task's, a pid namespace's init, iowrap itself): the
 * record keeps the parent q had when it was seen.  Not the main process,
 * whose parent, iowrap, is never in the table and outlives it.
 */
static bool may_be_child_of(const struct tracer *tr, const struct process *q,
			    pid_t ppid)
{
	return q->rec.ppid == ppid ||
	       (q->rec.pid != tr->main_pid &&
		!pidmap_get(&tr->table.processes, q->rec.ppid));
}

/*
 * Whether a process that may have made held process c may still announce
 * it: c's parent, or a child of that parent (clone(CLONE_PARENT)), that
 * is or may be in a creation call.  A grandchild cannot make a child of
 * c's parent, and a process not known yet (at neither its first stop nor
 * its creator's event) has not run.
 */
static bool creators_may_announce(const struct tracer *tr,
				  const struct process *c)
{
	const struct pidmap *m = &tr->table.processes;

	if (may_announce_more(tr, c->rec.ppid))
		return true;
	for (size_t i = 0; i <= m->mask; i++) {
		const struct process *q = m->slot[i].value;

		if (m->slot[i].key && q != c &&
		    may_be_child_of(tr, q, c->rec.ppid) &&
		    process_may_announce(tr, q))
			return true;
	}
	return false;
}

/* A hold younger than this is nearly always an event on its way: the
 * walk is not worth its /proc reads for it (the tick comes again). */
#define UNMADE_HOLD_MIN_US 200000

struct unmade {
	const struct tracer *tr;
	int64_t held_before; /* monotonic */
};

/* A held new process (not a thread: its creator is a thread of its own
 * process, which ends with it), held for a while, that nothing may
 * announce any more. */
static bool no_creator_left(const struct tracee *t, const void *arg)
{
	const struct unmade *u = arg;

	return t->tid == t->proc->rec.pid &&
	       t->held_since_us <= u->held_before &&
	       !creators_may_announce(u->tr, t->proc);
}

/*
 * At the flush tick: a held process whose possible creators are all in
 * no creation call goes on.  A creator's death lets its held children
 * go (release_orphaned), but not its siblings while their parent may be
 * making a child, which is how a clone(CLONE_PARENT) child of a creator
 * killed in its clone is seen: it waited HOLD_LIMIT_S (7 of 40 synthetic
 * rounds; tests/helpers/cparentkill.c every time).  Nor does a death
 * reach a child whose first stop comes after it.  The walk reads /proc
 * only while a process has been held UNMADE_HOLD_MIN_US at the tick.
 */
static void release_unmade_holds(struct tracer *tr)
{
	const struct unmade u = { tr, now_monotonic_us() - UNMADE_HOLD_MIN_US };

	release_holds(tr, no_creator_left, &u);
}

/*
 * The last resort: a new process held longer than HOLD_LIMIT_S goes on
 * without its event.  No way is known for an event to stay away so long
 * (release_orphaned, adopt_unseen_children and release_unmade_holds cover
 * those found), but a held process that waits for ever takes the task
 * with it; one that goes on may lack what it inherited, which the summary
 * says.  Checked at the first thread's flush tick, once a second.
 */
static void expire_holds(struct tracer *tr)
{
	const int64_t oldest = now_monotonic_us() - HOLD_LIMIT_S * 1000000LL;

	tr->result->holds_expired +=
		release_holds(tr, held_since_before, &oldest);
}

/* The index of the tracer thread tid, or -1. */
static int worker_of(const struct tracer *tr, pid_t tid)
{
	for (int i = 0; tid && i < tr->nworkers; i++)
		if (tr->workers[i].tid == tid)
			return i;
	return -1;
}

/*
 * A tracee first seen at a stop this thread waited: usually its own (a
 * child stops before its parent's fork event comes), but the stop of a
 * child of iowrap's (an orphan's clone with CLONE_PARENT) that another
 * thread traces reaches the parent's wait too.  Its tracer is the thread
 * /proc names.
 */
static void owner_from_tracer_pid(struct tracer *tr, struct tracee *t,
				  pid_t tracer_pid)
{
	int w = worker_of(tr, tracer_pid);

	if (w >= 0)
		t->owner = w;
}

struct adoption {
	struct tracer *tr;
	const struct process *parent;
};

/* A child of the execing process: known from here if it is not yet. */
static void adopt_child(pid_t pid, void *arg)
{
	struct adoption *a = arg;
	struct proc_table *pt = &a->tr->table;
	struct proc_status st;
	struct tracee *t;
	int w;

	if (tracee_find(pt, pid) ||
	    read_task_status(pt->procfd, pid, 0, &st) < 0 || st.tgid != pid)
		return;
	w = worker_of(a->tr, st.tracer_pid);
	t = w < 0 ? NULL : tracee_add_child(pt, pid, a->parent, &st);
	if (t)
		t->owner = w;
}

/*
 * A thread killed in the middle of its fork by another thread's exec
 * never stops for the event, and its child's first stop may come after
 * the exec's: release_orphaned() did not see it, and it would wait for
 * ever (tests/helpers/forkexec.c: 1 run in about 1,600 hung so).  Every
 * child the process has at the exec was made before it: a dead thread's
 * go to a live one of its process, the execing thread in the end, and
 * that thread's own were known at their events, which came before it
 * could exec.  Those not known yet are known from here, as announced:
 * they do not wait at their first stop.  A process that never had a
 * second thread has none such.
 */
static void adopt_unseen_children(struct tracer *tr, const struct process *p)
{
	struct adoption a = { .tr = tr, .parent = p };

	if ((!tr->io_on && !signals_scanned()) || p->rec.usage.threads < 2)
		return;
	read_task_children(tr->table.procfd, p->rec.pid, p->rec.pid,
			   adopt_child, &a);
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
			follow_job_stop(sig, take_stop_sender(t->proc, sig));
		return;
	}
	if (t->unannounced && t->fresh) {
		t->held = true;
		t->held_since_us = now_monotonic_us();
		self->held++;
		return;
	}
	if (!hand_over(tr, t))
		resume(t, 0);
}

static void handle_stop(struct tracer *tr, pid_t tid, int status);
static void dispatch(struct tracer *tr, pid_t tid, int status);

static bool native_call(const struct tracee *t)
{
	return t->call.arch == AUDIT_ARCH_X86_64 && !t->call.x32;
}

/*
 * Whether tid is traced by another tracer thread now.  A thread's exec
 * kills its leader and takes the leader's tid; waitpid() on that tid by
 * the leader's tracer thread may then wait for ever (seen once, holding
 * the lock the new owner of the tid waited for; on this kernel the killed
 * leader's exit stop usually comes first).
 */
static bool tid_taken_over(struct tracer *tr, pid_t tid)
{
	struct proc_status st;

	return read_task_status(tr->table.procfd, tid, 0, &st) == 0 &&
	       st.tracer_pid != self->tid;
}

/*
 * An injected call whose stop has not come for INJECT_SLOW_S, while the
 * lock holds every other tracee: where the thread waits, said on stderr
 * once a run (the wait goes on).  A stall of every tracee, seen once in
 * some 14,000 runs of execrace and not since, fits this; the next one
 * names its cause.  Only stat and wchan: before Linux 5.7, reading
 * /proc/TID/stack or syscall waits for an exec's cred_guard_mutex, which
 * may be what holds the thread.  Not a problem of the trace: nothing is
 * lost by waiting.
 */
static void report_slow_injection(struct tracer *tr, pid_t tid)
{
	struct proc_stat st = { .state = '?' };
	char path[32], wchan[64];

	tr->injection_reported = true;
	read_proc_stat(tr->table.procfd, tid, &st);
	snprintf(path, sizeof(path), "%d/wchan", (int)tid);
	/* The kernel's words, not the task's: a state letter, a symbol. */
	if (read_file_at(tr->table.procfd, path, wchan, sizeof(wchan)) <= 0)
		snprintf(wchan, sizeof(wchan), "?");
	warnx_line("a filter injected into thread %d has waited %d s for its "
		   "stop, every tracee with it: state %c, wchan %s",
		   (int)tid, INJECT_SLOW_S, st.state, wchan);
}

/*
 * The injection's wait, with several tracer threads: it holds the lock,
 * and the stop it waits for may be taken by the first thread's wait (an
 * orphan's, as its real parent's), which hands it over here without the
 * lock (serve).  Injections are rare: a short poll does.
 */
static pid_t wait_injected(pid_t tid, int *status)
{
	struct tracer *tr = self->tr;
	const struct timespec nap = { .tv_nsec = 20000 };
	int64_t slow_at = now_monotonic_us() + INJECT_SLOW_S * 1000000LL;

	for (unsigned naps = 1;; naps++) {
		pid_t got =
			waitpid(tid, status, __WALL | __WNOTHREAD | WNOHANG);

		if (got != 0)
			return got;
		if (atomic_exchange(&tr->stolen, false)) {
			*status = atomic_load(&tr->stolen_status);
			return tid;
		}
		if (naps % 64 == 0 && tid_taken_over(tr, tid)) {
			errno = ESRCH;
			return -1;
		}
		if (naps % 64 == 0 && !tr->injection_reported &&
		    now_monotonic_us() > slow_at)
			report_slow_injection(tr, tid);
		nanosleep(&nap, NULL);
	}
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
	struct fd_plan plan;
	struct inject_out out;
	enum inject_result r;
	pid_t tid = t->tid;

	if (!tr->io.scoped || !native_call(t) ||
	    !fdscope_plan(&p->scope, fdtable_traced(p->fds), &plan))
		return true;
	if (tr->nworkers > 1) {
		atomic_store(&tr->stolen, false);
		atomic_store(&tr->injecting, tid);
	}
	r = inject_filter(tid, at_entry, plan.code, (size_t)plan.len,
			  &p->inject_page,
			  tr->nworkers > 1 ? wait_injected : NULL, &out);
	atomic_store(&tr->injecting, 0);
	tr->io.syscall_stops += out.stops;
	if (r == INJECT_GONE || r == INJECT_STOPPED) {
		/* Not handled here: a stop the thread made meanwhile (the
		 * filter is tried again at a later exit stop), its end. */
		if (out.status == -1)
			return false;
		/* As if waited for: the first thread, the real parent of
		 * some, may get another tracer thread's exec stop under a
		 * tid it injects into (exec_owner). */
		dispatch(tr, tid, out.status);
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

/* -ERESTARTSYS (512) ... -ERESTART_RESTARTBLOCK (516): the kernel's own
 * codes for a call a signal interrupted (include/linux/errno.h). */
static bool is_restart_code(int64_t ret)
{
	return ret <= -512 && ret >= -516;
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
	return ret != -EINTR && !is_restart_code(ret);
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

/*
 * The calls in the filter for CPU following alone: the tracee's own mask,
 * not a pin of ours, is what it sees or changes, and it is put back
 * before a new uid may take the tracer's right to (cpufollow.h).  True if
 * handled (and resumed).
 */
static bool pin_matters(struct tracer *tr, struct tracee *t,
			const struct ptrace_syscall_info *si)
{
	switch (si->seccomp.ret_data & SC_DATA_ID_MASK) {
	case SC_SCHED_AFFINITY:
		follow_affinity_call(&self->follow, t->tid,
				     (pid_t)si->seccomp.args[0]);
		break;
	case SC_SETUID:
		follow_affinity_call(&self->follow, t->tid, 0);
		break;
	default:
		return false;
	}
	tr->io.syscall_stops++;
	resume(t, 0);
	return true;
}

/*
 * A stop of a filter of the task's own (SECCOMP_RET_TRACE with data not
 * ours): it asks the task's tracer, and iowrap is none of the task's.
 * Without one the kernel fails the call with ENOSYS (seccomp(2)), and so
 * does iowrap: resuming it would let through a call the task's policy
 * keeps for its own tracer.  (Where a filter of iowrap's added later also
 * traces the call, the kernel gives that one's data: docs/tracer.md.)
 */
static bool foreign_stop(const struct ptrace_syscall_info *si)
{
	return si->op == PTRACE_SYSCALL_INFO_SECCOMP &&
	       (si->seccomp.ret_data & SC_DATA_TAG_MASK) != SC_DATA_OURS;
}

/* The call skipped (number -1) with the kernel's ENOSYS as its result;
 * if the tracee is gone meanwhile, there is nothing to skip. */
static void fail_as_untraced(struct tracer *tr, struct tracee *t)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, t->tid, 0L, &regs) == 0) {
		regs.orig_rax = (unsigned long long)-1;
		regs.rax = (unsigned long long)-ENOSYS;
		ptrace(PTRACE_SETREGS, t->tid, 0L, &regs);
	}
	tr->io.syscall_stops++;
	resume(t, 0);
}

/*
 * Interrupted calls.  A traced call that a signal interrupts exits with
 * one of the kernel's restart codes, which the task never sees: the
 * kernel restarts the call (no handler runs, -ERESTARTNOINTR, or a
 * handler with SA_RESTART and -ERESTARTSYS), and its row comes from the
 * new entry; or fails it with EINTR (a handler without SA_RESTART, or a
 * handler and -ERESTARTNOHAND), and its row has -EINTR.  The kernel
 * decides as it delivers a signal, after the exit stop, so the row
 * waits for the stops that follow: the call's new entry (restarted), a
 * signal-delivery-stop of a signal with a handler (SigCgt, read then:
 * the handler may have changed), or the thread's end (killed asleep:
 * -EINTR, as finish_killed_call has it).  /proc does not show
 * SA_RESTART: for -ERESTARTSYS the thread goes one step into its
 * handler (PTRACE_SINGLESTEP from the signal-delivery-stop stops it
 * right after the kernel has written the handler's frame), whose saved
 * rax says which.
 */
#define ERESTARTSYS_CODE 512
#define ERESTARTNOINTR_CODE 513
/* i386's struct sigcontext_32: eax after 4 segment registers (2 + 2
 * bytes each) and 7 general ones; in struct ucontext_ia32 after
 * uc_flags, uc_link and a 12-byte uc_stack; in struct sigframe_ia32
 * after pretcode and sig (arch/x86/include/asm/sigframe.h). */
#define I386_SC_EAX (16 + 7 * 4)
#define I386_UC_EAX (20 + I386_SC_EAX)
#define I386_FRAME_EAX (8 + I386_SC_EAX)

static void write_interrupted(struct tracer *tr, struct tracee *t)
{
	struct ptrace_syscall_info si = { .op = PTRACE_SYSCALL_INFO_EXIT };
	struct tracee *next;

	t->intr_code = 0;
	t->intr_stepping = false;
	si.arch = t->call.arch;
	si.exit.rval = -EINTR;
	si.exit.is_error = 1;
	next = iotrace_exit(&tr->io, t, &si);
	if (next)
		resume(next, 0);
}

/* The waiting row is not to be written: the call restarted. */
static void forget_interrupted(struct tracee *t)
{
	t->intr_code = 0;
	t->intr_stepping = false;
}

/* The exit stop of an interrupted call; returns a tracee to resume. */
static struct tracee *on_interrupted(struct tracer *tr, struct tracee *t,
				     int64_t code)
{
	if (code != -ERESTARTNOINTR_CODE)
		t->intr_code = (int16_t)-code;
	return iotrace_call_over(&tr->io, t);
}

static bool has_handler(struct tracer *tr, struct tracee *t, int sig)
{
	pid_t pid = t->proc->rec.pid;
	struct proc_status st;

	return sig > 0 && sig <= 64 &&
	       read_task_status(tr->table.procfd, pid,
				t->tid == pid ? 0 : t->tid, &st) == 0 &&
	       (st.sig_caught & (UINT64_C(1) << (sig - 1)));
}

/* The signal-delivery-stop of a thread whose interrupted call waits. */
static void interrupted_by(struct tracer *tr, struct tracee *t, int sig)
{
	if (!has_handler(tr, t, sig))
		return; /* no handler: on to the next signal, or a restart */
	if (t->intr_code != ERESTARTSYS_CODE)
		write_interrupted(tr, t);
	else if (t->call.x32) /* its frame's layout: taken for SA_RESTART */
		forget_interrupted(t);
	else
		t->intr_stepping = true;
}

/* The saved eax or rax of the frame a handler was entered with: x86_64's
 * ucontext is at rdx; i386's at ecx for an SA_SIGINFO handler, else its
 * sigcontext right after the return address and the signal number. */
static int saved_result(const struct tracee *t, uint64_t *saved)
{
	struct user_regs_struct regs;
	uint32_t eax;

	if (ptrace(PTRACE_GETREGS, t->tid, 0L, &regs) < 0)
		return -errno;
	if (t->call.arch == AUDIT_ARCH_X86_64)
		return tracee_read(t->tid, TRACEE_ANY_PAGE,
				   regs.rdx +
					   offsetof(ucontext_t,
						    uc_mcontext.gregs[REG_RAX]),
				   saved, sizeof(*saved));
	if (tracee_read(t->tid, TRACEE_ANY_PAGE,
			regs.rcx ? regs.rcx + I386_UC_EAX :
				   regs.rsp + I386_FRAME_EAX,
			&eax, sizeof(eax)) < 0)
		return -EFAULT;
	*saved = (uint64_t)(int64_t)(int32_t)eax;
	return 0;
}

/* Stopped one step into a handler: its frame's saved result is -EINTR,
 * or the call's number for a restart. */
static void at_handler(struct tracer *tr, struct tracee *t)
{
	uint64_t saved = 0;

	if (saved_result(t, &saved) == 0 && saved == (uint64_t)-EINTR)
		write_interrupted(tr, t);
	else
		forget_interrupted(t);
}

/* The trap of our step into a handler: ptrace_notify()'s, whose si_code
 * is SIGTRAP, never a task's own SIGTRAP. */
static bool is_step_trap(const struct tracee *t, int sig)
{
	siginfo_t si;

	return t->intr_stepping && sig == SIGTRAP &&
	       ptrace(PTRACE_GETSIGINFO, t->tid, 0L, &si) == 0 &&
	       si.si_code == SIGTRAP;
}

static void handle_seccomp_stop(struct tracer *tr, struct tracee *t)
{
	struct ptrace_syscall_info si;
	enum entry_next next = ENTRY_RESUME;
	bool known = tracee_syscall_info(t->tid, &si);

	if (left_the_stop(known, &si))
		return; /* its call never ran */
	forget_interrupted(t); /* it restarted, or another call came */
	if (known && foreign_stop(&si)) {
		fail_as_untraced(tr, t);
		return;
	}
	if (tr->io_on && known && si.op == PTRACE_SYSCALL_INFO_SECCOMP) {
		if (pin_matters(tr, t, &si))
			return;
		next = iotrace_entry(&tr->io, t, &si);
	}
	if (next == ENTRY_RESUME && tr->io.scoped && needs_scope_first(t)) {
		if (!native_call(t))
			give_up_scope(tr, t);
		else if (!sync_scope(tr, t, true))
			return;
	}
	if (next != ENTRY_RESUME) {
		t->call.active = true;
		t->call.skip_entry = tr->seccomp_before_sysentry;
	}
	/* See exec_in: take_over resumes it. */
	if (next == ENTRY_TO_EXIT && is_exec_call(t) && handing_in(t->proc)) {
		t->exec_held = true;
		return;
	}
	/* Held: end_call() or the exit of the call before resumes it. */
	if (next != ENTRY_HOLD)
		resume(t, 0);
	else
		t->queued = true;
}

static void handle_syscall_stop(struct tracer *tr, struct tracee *t)
{
	struct ptrace_syscall_info si;
	struct tracee *next = NULL;
	bool decoded = false, here = true, known, exit_known;

	if (t->call.skip_entry) {
		/* Kernels < 4.8: the syscall-enter-stop after the seccomp stop. */
		t->call.skip_entry = false;
		resume(t, 0);
		return;
	}

	known = t->call.active && tracee_syscall_info(t->tid, &si);
	if (t->call.active && left_the_stop(known, &si))
		return; /* its call ends at its exit stop, or its death */
	exit_known = known && si.op == PTRACE_SYSCALL_INFO_EXIT;
	if (exit_known && is_restart_code(si.exit.rval)) {
		next = on_interrupted(tr, t, si.exit.rval);
	} else if (exit_known) {
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
	if (tr->io.scoped && p->live_threads > 1 &&
	    filters_of(tr, child->rec.pid, 0) <
		    filters_of(tr, p->rec.pid, parent->tid)) {
		child->scope.fds = (struct fd_numbers){ .low = 0 };
		child->scope.all = false;
		child->scope.want_all = true;
	}
}

/*
 * Whether the filters iowrap runs under itself, which the task has
 * too, let ppoll through: a child tries one that returns at once (a
 * filter may kill it, or make it fail).
 */
static bool inherited_filters_allow_ppoll(void)
{
	const struct timespec zero = { 0, 0 };
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(syscall(SYS_ppoll, NULL, 0L, &zero, NULL, 8L) == 0 ? 0 :
									   1);
	if (pid < 0)
		return false;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * The task's first exec: its filter is in place.  The scoped one is the
 * one installed under NO_NEW_PRIVS (filter_install), at --level full.
 */
static void start_scope(struct tracer *tr, struct process *main)
{
	struct proc_status st;
	bool known =
		read_task_status(tr->table.procfd, main->rec.pid, 0, &st) == 0;

	tr->main_execed = true;
	/* Unreadable: scoped, to be sure (filters added to a plain one only
	 * add stops). */
	tr->io.scoped = tr->cfg->level == LEVEL_FULL &&
			(!known || st.no_new_privs);
	tr->result->fd_scoped = tr->io.scoped;
	/* A filter from before iowrap (a container's) might refuse the
	 * ppoll a process handed over is parked in: tried first. */
	tr->base_filters = known ? st.seccomp_filters : 0;
	tr->handoffs =
		tr->cfg->handover != HANDOVER_NEVER && tr->nworkers > 1 &&
		!tr->threads_missing && tr->base_filters >= 1 &&
		(tr->base_filters == 1 || inherited_filters_allow_ppoll());
	main->scope.fds = tr->cfg->inherited;
	main->scope.all = tr->cfg->inherited.overflow;
}

/*
 * The result a syscall left in the registers of a thread killed before
 * its exit stop (orig_rax its number).  -ENOSYS is what the kernel puts
 * there at the syscall's entry: killed at its entry stop, the call never
 * ran.  A fatal signal while the call slept ends it with a restart code:
 * nothing restarts it, so it failed with EINTR.  i386's result is 32-bit.
 */
static bool killed_call_result(const struct tracee *t, long *rval)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, t->tid, 0L, &regs) < 0 ||
	    regs.orig_rax != t->call.nr)
		return false;
	*rval = t->call.arch == AUDIT_ARCH_I386 ? (long)(int32_t)regs.rax :
						  (long)regs.rax;
	if (*rval == -ENOSYS)
		return false;
	if (is_restart_code(*rval))
		*rval = -EINTR;
	return true;
}

/*
 * A thread at its exit stop in the middle of a traced call (another
 * thread's exit_group or a SIGKILL came before the call's exit stop): the
 * call's exit is decoded from its registers, so that a write another
 * thread's exit cut short still has its row.  No filter is added: the
 * whole process is dying.
 */
static void finish_killed_call(struct tracer *tr, struct tracee *t)
{
	struct ptrace_syscall_info si = { .op = PTRACE_SYSCALL_INFO_EXIT };
	struct tracee *next = NULL;
	long rval;

	if (!tr->io_on || !t->call.active)
		return;
	t->call.active = false;
	si.arch = t->call.arch;
	if (killed_call_result(t, &rval)) {
		si.exit.rval = rval;
		si.exit.is_error = rval < 0 && rval >= -4095;
		next = iotrace_exit(&tr->io, t, &si);
	} else {
		end_call(tr, t);
	}
	if (next)
		resume(next, 0);
}

/*
 * A thread's end.  Once the main process's last thread is here, a signal
 * sent to iowrap would reach only a dying process: from now on forwarded
 * ones go to the rest of the task (signals.h).  Those pending are judged
 * after that, and before this thread can be gone.
 */
static void handle_exit_stop(struct tracer *tr, struct tracee *t)
{
	bool last;

	if (t->intr_code)
		write_interrupted(tr, t); /* killed asleep, as below */
	finish_killed_call(tr, t);
	last = process_exit_stop(&tr->table, t);

	if (last && t->proc->rec.pid == tr->main_pid)
		signals_main_ended();
	signals_settle();
	if (tr->io_on)
		iotrace_thread_exit(&tr->io, t, last);
}

/* t's fork, vfork or clone event: the child it names is known from here,
 * a copy of t's process or a thread of it. */
static void handle_creation(struct tracer *tr, struct tracee *t, unsigned event)
{
	unsigned long msg = 0;
	struct tracee *child;

	if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0L, &msg) < 0)
		return;
	/* Made while t was pinned: its own mask back before it runs. */
	follow_created(&self->follow, t->tid, (pid_t)msg);
	if (event != PTRACE_EVENT_CLONE && tr->cfg->lose_fork_events)
		return;
	child = tracee_get_child(&tr->table, (pid_t)msg, t->proc);
	if (!child)
		return;
	if (child->proc != t->proc) {
		/* A forwarded signal that came in the middle of the fork
		 * (signals.h). */
		if (child->fresh)
			signals_share_pending(t->tid, child->tid);
		process_forked(child->proc, t->proc);
		if (tr->io_on)
			iotrace_fork(t, child->proc);
		inherit_scope(tr, t, child->proc);
	} else if (tr->io_on) {
		iotrace_thread(&tr->io, t, child);
	}
	announce(tr, child);
}

static void handle_stop(struct tracer *tr, pid_t tid, int status)
{
	struct tracee *t = tracee_get(&tr->table, tid, 0);
	unsigned long msg = 0;
	int sig = WSTOPSIG(status);

	if (t->parked)
		restore_parked(t);
	/* Out of its hold (a SIGKILL woke it): not to be resumed again. */
	t->exec_held = false;
	/* Seen at a stop of its own: resumed from that one. */
	t->queued = false;

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
		handle_creation(tr, t, (unsigned)status >> 16);
		resume(t, 0);
		return;
	case PTRACE_EVENT_EXEC:
		/* A thread's exec ends the leader, maybe held: its tid is
		 * the execing thread's from here. */
		end_call(tr, t);
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0L, &msg) < 0)
			msg = (unsigned long)tid;
		process_exec(&tr->table, t, (pid_t)msg);
		release_orphaned(tr, t->proc->rec.pid, t->proc->rec.pid);
		adopt_unseen_children(tr, t->proc);
		t->proc->inject_page = 0; /* a new address space */
		if (!tr->main_execed && t->proc->rec.pid == tr->main_pid)
			start_scope(tr, t->proc);
		resume(t, 0);
		return;
	case PTRACE_EVENT_EXIT:
		/* Put back while its tid is still its own. */
		follow_forget(&self->follow, tid, false);
		handle_exit_stop(tr, t);
		resume(t, 0);
		return;
	case PTRACE_EVENT_STOP:
		handle_event_stop(tr, t, sig);
		return;
	}
	if (is_step_trap(t, sig)) {
		at_handler(tr, t);
		resume(t, 0);
		return;
	}
	/* A signal-delivery-stop: deliver the signal as it was meant. */
	if (t->intr_code)
		interrupted_by(tr, t, sig);
	if (sig == SIGSTOP)
		t->proc->stopped_by_task = sent_by_task(tr, t);
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
	follow_forget(&self->follow, t->tid, false);
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
 * so it does not burn a CPU the task could use.  It polls only while it
 * follows a tracee's CPU (cpufollow.h): polling at normal priority on a CPU
 * of its own took CPU time from the task's other processes (make -j2:
 * 5-8%).  Pinned beside its pinned tracee it yields between polls, so the
 * tracee runs at once (at SCHED_IDLE the tracee preempts it anyway).
 * Sleeping instead made each stop a wake-up: dd 4k at full 18% slower,
 * tar 10%, make 7%.
 */
static pid_t wait_next(struct spin *sp, struct cpu_follow *follow, int *status)
{
	pid_t tid = waitpid(-1, status, __WALL | __WNOTHREAD | WNOHANG);
	int64_t until;

	if (tid != 0) {
		if (sp->skip)
			sp->skip--;
		else
			sp->backoff = 0;
		return tid;
	}
	follow_missed(follow);
	if (sp->window_us <= 0 || sp->skip || !follow->active) {
		if (sp->skip)
			sp->skip--;
		return waitpid(-1, status, __WALL | __WNOTHREAD);
	}
	until = now_monotonic_us() + sp->window_us;
	do {
		tid = waitpid(-1, status, __WALL | __WNOTHREAD | WNOHANG);
		if (tid != 0) {
			sp->backoff = 0;
			return tid;
		}
		/* At normal priority beside a pinned tracee: let it run. */
		if (!idles_tracer(follow))
			sched_yield();
	} while (now_monotonic_us() < until);
	/* A wake-up from the watchdog that came while polling was spent
	 * there: look for the end of the phase before sleeping. */
	follow_missed(follow);
	sp->backoff = sp->backoff ? sp->backoff * 2 : 1;
	if (sp->backoff > 256)
		sp->backoff = 256;
	sp->skip = sp->backoff;
	return waitpid(-1, status, __WALL | __WNOTHREAD);
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

/* How long a tracer thread spins for the lock before it sleeps: a stop
 * holds it for microseconds, and a sleeping thread's wake-up costs tens
 * of them (an idle vCPU's IPI). */
#define LOCK_SPIN_US 50

static void lock(struct tracer *tr)
{
	int64_t until = 0;

	for (unsigned i = 1; pthread_mutex_trylock(&tr->lock) != 0; i++) {
		if (i % 64 == 0) {
			int64_t now = now_monotonic_us();

			if (!until) {
				until = now + LOCK_SPIN_US;
			} else if (now > until) {
				pthread_mutex_lock(&tr->lock);
				break;
			}
		}
		__builtin_ia32_pause();
	}
	tr->table.tracer_tid = self->tid;
	tr->table.owner = self->index;
}

static void unlock(struct tracer *tr)
{
	pthread_mutex_unlock(&tr->lock);
}

static bool is_exec_stop(int status);

/*
 * An exec stop: a thread other than the leader that execed has the
 * leader's tid from here, and a pin of its own with it (cpufollow.h).
 * Before the stop counts for CPU following, which would take the tid for
 * another tracee's and end the phase through the old one.
 */
static void rename_pin(pid_t tid)
{
	unsigned long former;

	/* Only pins need it: no second event message per exec otherwise. */
	if (pins_tracee(&self->follow) &&
	    ptrace(PTRACE_GETEVENTMSG, tid, 0L, &former) == 0)
		follow_renamed(&self->follow, (pid_t)former, tid);
}

/* What other tracer threads asked of this one. */
static void read_mail(struct tracer *tr)
{
	struct mail m;

	while (mailbox_take(&self->box, &m)) {
		struct tracee *t = tracee_find(&tr->table, m.tid);

		switch (m.kind) {
		case MAIL_RESUME:
			if (t)
				resume(t, m.arg);
			break;
		case MAIL_STOP:
			if (t && is_exec_stop(m.arg))
				rename_pin(m.tid);
			if (t)
				handle_stop(tr, m.tid, m.arg);
			break;
		case MAIL_TAKE:
			take_over(tr, &m);
			break;
		case MAIL_ANNOUNCE:
			if (t && t->held && t->owner == self->index)
				announce(tr, t);
			else if (t) /* not ours now: may be told again */
				t->release_mailed = false;
			break;
		}
	}
}

/*
 * Whether the event that makes new process p known can still come: its
 * parent is a process of the task.  A child whose creator was killed in
 * its fork (another thread's exit_group, a SIGKILL), first seen after
 * the creator's end, is an orphan, iowrap's (the subreaper's) or init's:
 * no event comes for it.  (A sibling that the main process makes with
 * CLONE_PARENT is iowrap's child too: it goes on before its event.)
 */
static bool creator_may_report(struct tracer *tr, const struct process *p)
{
	return pidmap_get(&tr->table.processes, p->rec.ppid) != NULL;
}

/*
 * A tracee first seen at a stop of its own, not at its creator's event.
 * A new process then waits for that event at its first stop (announce):
 * its descriptor table, and at --level full the scope of its filter, are
 * its creator's, and become known only there.  Both stops are queued by
 * then, but waitpid() returns the newest tracee's first, and a creator
 * that is a thread (or slowed down) stops for its event only after the
 * child has run: the child's first calls found no descriptor (random
 * runs under load lost rows; tests/helpers/forkfirst.c lost 330 to 670 of
 * 1,000 closes).
 */
static struct tracee *new_tracee(struct tracer *tr, pid_t tid)
{
	struct tracee *t = tracee_get(&tr->table, tid, 0);
	const struct process *p = t->proc;

	owner_from_tracer_pid(tr, t, t->tracer_tid);
	/* At --level summary only once a forwarded signal has been scanned
	 * for: the creator may have one to share (signals_share_pending),
	 * and a process that has run could get it twice. */
	t->unannounced = (tr->io_on || signals_scanned()) &&
			 tid == p->rec.pid && p->threads == t && !t->next &&
			 tid != tr->main_pid && creator_may_report(tr, p);
	/* A new thread of a process whose threads have tables of their own,
	 * or one with a table or cwd apart, waits too: whether it shares its
	 * creator's table, and which, the event tells (a thread that ran
	 * first used the process's). */
	if (tr->io_on && tid != p->rec.pid &&
	    (p->fds_split || iotrace_thread_may_part(t)))
		t->unannounced = true;
	/* So does one that may have been made with a pin (cpufollow.h). */
	if (tid != p->rec.pid &&
	    follow_holds_threads_of(&self->follow, p->rec.pid))
		t->unannounced = true;
	return t;
}

/*
 * Whether this thread traces tid, stopped: only its tracer may ask for
 * its event message.  A tid can be two tracer threads' in turn: a thread
 * that execs takes its leader's (exec_owner; serve).
 */
static bool is_our_tracee(pid_t tid)
{
	unsigned long msg;

	return ptrace(PTRACE_GETEVENTMSG, tid, 0L, &msg) == 0;
}

/*
 * An exec by a thread other than the leader gives the execing thread the
 * leader's tid (the leader is gone): its exec stop comes under the
 * leader's tid from the execing thread's tracer thread, which may not be
 * the leader's, and may reach the first thread's wait as well (the real
 * parent's).  Ours if we may ask for its event message; else TracerPid
 * names the owner.
 */
static void exec_owner(struct tracer *tr, struct tracee *t)
{
	struct proc_status st;

	if (tr->nworkers == 1)
		return;
	if (is_our_tracee(t->tid)) {
		t->owner = self->index;
		return;
	}
	if (read_task_status(tr->table.procfd, t->tid, 0, &st) == 0)
		owner_from_tracer_pid(tr, t, st.tracer_pid);
}

/* An event this thread's waitpid() returned, under the lock. */
static void dispatch(struct tracer *tr, pid_t tid, int status)
{
	struct tracee *t;

	if (tid == self->box.doorbell) {
		if (WIFSTOPPED(status))
			mailbox_rearm(&self->box);
		else
			mailbox_doorbell_died(&self->box);
		return;
	}
	if (!WIFSTOPPED(status)) {
		handle_death(tr, tid, status);
		return;
	}
	t = tracee_find(&tr->table, tid);
	if (!t)
		t = new_tracee(tr, tid);
	if (is_exec_stop(status))
		exec_owner(tr, t);
	if (t->owner != self->index) {
		/* An orphan's stop, taken by our wait as its new parent's:
		 * its tracer thread handles it. */
		struct mail m = { .kind = MAIL_STOP,
				  .tid = tid,
				  .arg = status };

		mailbox_post(&tr->workers[t->owner].box, &m);
		return;
	}
	t->last_stop_us = now_monotonic_us();
	if (is_exec_stop(status))
		rename_pin(tid);
	follow_stop(&self->follow, tid, t->proc->rec.pid,
		    (int)((unsigned)status >> 16));
	handle_stop(tr, tid, status);
}

/* With several threads: the last tracee is gone (none can come back,
 * only a tracee's fork makes one), so every thread stops. */
static void check_over(struct tracer *tr)
{
	if (tr->nworkers < 2 || tr->quit || tr->table.tracees.count > 0)
		return;
	tr->quit = true;
	for (int i = 0; i < tr->nworkers; i++)
		if (&tr->workers[i] != self)
			mailbox_ring(&tr->workers[i].box);
}

/*
 * This thread stops before the others: no process may be handed to it
 * any more, and those handed to it and not yet seized go to the first
 * thread.  (It has no tracees: PTRACE_O_EXITKILL would kill them with
 * it, which is why a thread with tracees never stops before the end.)
 */
static void retire(struct tracer *tr)
{
	struct mail m;

	if (self->index == 0)
		return;
	self->box.doorbell = 0;
	while (mailbox_take(&self->box, &m)) {
		struct tracee *t = tracee_find(&tr->table, m.tid);

		if (m.kind != MAIL_TAKE || !t)
			continue;
		t->owner = 0;
		mailbox_post(&tr->workers[0].box, &m);
	}
}

/* Under the lock, after an event: the flush tick, mail; true if this
 * thread's work is over. */
static bool between_events(struct tracer *tr)
{
	const struct tracer_config *cfg = tr->cfg;

	if (self->index == 0 && *cfg->tick) {
		*cfg->tick = 0;
		trace_tick(cfg->sink);
		release_unmade_holds(tr);
		expire_holds(tr);
	}
	read_mail(tr);
	check_over(tr);
	if (tr->quit)
		return true;
	if (!cfg->wait_orphans && main_gone(tr)) {
		detach_remaining(tr);
		return true;
	}
	return false;
}

/* A tracer thread's loop: until its tracees are gone (waitpid's ECHILD)
 * or, with several threads, all are; false if tracing broke off. */
static void serve(struct tracer *tr)
{
	struct worker *w = self;

	lock(tr);
	for (;;) {
		int status, err;
		pid_t tid;
		bool over = between_events(tr);

		unlock(tr);
		resume_pending(w);
		if (over)
			return;
		tid = wait_next(&w->spin, &w->follow, &status);
		if (tid > 0 && tid == atomic_load(&tr->injecting) &&
		    !is_our_tracee(tid)) {
			/* Another thread adds it a filter, holding the lock
			 * and waiting for this (wait_injected). */
			atomic_store(&tr->stolen_status, status);
			atomic_store(&tr->stolen, true);
			lock(tr);
			continue;
		}
		err = tid < 0 ? errno : 0;
		lock(tr);
		if (tid > 0) {
			dispatch(tr, tid, status);
		} else if (err != EINTR) {
			if (err != ECHILD)
				snprintf(tr->result->error,
					 sizeof(tr->result->error),
					 "waitpid: %s", strerror(err));
			retire(tr);
			unlock(tr);
			return;
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	self = w;
	serve(w->tr);
	/* By the thread itself: its watchdog and tid go with it. */
	follow_release(&w->follow);
	return NULL;
}

/* Worker i's own state; the doorbell is seized by the thread itself. */
static int worker_init(struct tracer *tr, int i, int procfd)
{
	struct worker *w = &tr->workers[i];

	w->index = i;
	w->tr = tr;
	w->tid = gettid();
	spin_init(&w->spin, tr->cfg->spin_us);
	follow_init(&w->follow, procfd,
		    tr->io_on ? tr->cfg->follow_cpu : FOLLOW_OFF,
		    &tr->cpu_claims);
	return tr->nworkers > 1 ? mailbox_open(&w->box) : 0;
}

struct start_arg {
	struct worker *w;
	int procfd;
	sem_t *ready;
	int err;
};

static void *worker_start(void *arg)
{
	struct start_arg *a = arg;
	struct worker *w = a->w;
	int err = worker_init(w->tr, w->index, a->procfd);

	self = w;
	a->err = err;
	/* *a is the starting thread's, gone once it has its answer. */
	sem_post(a->ready);
	if (err) {
		follow_release(&w->follow);
		return NULL;
	}
	return worker_main(w);
}

/*
 * Starts threads 1..n-1 (signals blocked: they go to the main thread);
 * returns how many tracer threads run, the main one counted, and in
 * *created how many threads were made (to be joined).  A thread whose
 * doorbell could not be set up ends at once.
 */
static int start_workers(struct tracer *tr, int procfd, int *created)
{
	struct start_arg args[TRACER_MAX_THREADS];
	sem_t ready;
	sigset_t all, old;
	int started = 0, running = 1;

	if (sem_init(&ready, 0, 0) != 0)
		return 1;
	/* Not SIGCHLD: each stop of a thread's tracee sends one to that
	 * thread, and a blocked one would be queued and woken for instead
	 * of dropped (its default is to ignore it). */
	sigfillset(&all);
	sigdelset(&all, SIGCHLD);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 1; i < tr->nworkers; i++) {
		args[i] = (struct start_arg){ &tr->workers[i], procfd, &ready,
					      0 };
		tr->workers[i].index = i;
		tr->workers[i].tr = tr;
		if (pthread_create(&tr->workers[i].thread, NULL, worker_start,
				   &args[i]) != 0)
			break;
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; i < started; i++)
		while (sem_wait(&ready) < 0)
			;
	sem_destroy(&ready);
	for (int i = 1; i <= started; i++)
		running += args[i].err == 0;
	*created = started;
	return running;
}

static void stop_workers(struct tracer *tr, int started)
{
	for (int i = 1; i <= started; i++) {
		pthread_join(tr->workers[i].thread, NULL);
		mailbox_close(&tr->workers[i].box);
		free(tr->workers[i].resumes);
	}
	mailbox_close(&tr->workers[0].box);
}

static void sum_follow(struct tracer *tr, int n)
{
	for (int i = 0; i < n; i++) {
		const struct cpu_follow *f = &tr->workers[i].follow;

		tr->result->follow_phases += f->phases;
		tr->result->follow_starved += f->starved;
		tr->result->follow_moves += f->moves;
	}
	tr->result->follow_how = follow_how_name(tr->workers[0].follow.how);
}

/* One tracer thread per CPU this process (and the task) may run on. */
static int default_threads(void)
{
	cpu_set_t cpus;
	int n;

	if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
		return 1;
	n = CPU_COUNT(&cpus);
	return n < 1 ? 1 : n > TRACER_DEFAULT_MAX ? TRACER_DEFAULT_MAX : n;
}

int tracer_run(const struct tracer_config *cfg, pid_t main_pid,
	       struct tracer_result *result)
{
	static struct tracer tr;
	int procfd = proc_open_root();
	int threads = 1, started;

	memset(result, 0, sizeof(*result));
	memset(&tr, 0, sizeof(tr));
	tr.cfg = cfg;
	tr.result = result;
	tr.main_pid = main_pid;
	if (procfd < 0) {
		snprintf(result->error, sizeof(result->error),
			 "cannot open /proc: %s", strerror(errno));
		return -1;
	}
	pthread_mutex_init(&tr.lock, NULL);
	proc_table_init(&tr.table, procfd, cfg->cgroups);
	if (cfg->level != LEVEL_SUMMARY) {
		tr.table.sink = cfg->sink;
		tr.io_on = true;
		tr.seccomp_before_sysentry = seccomp_stop_before_sysentry() ==
					     1;
		iotrace_init(&tr.io, cfg->sink, procfd, cfg->include,
			     cfg->exclude);
		tr.io.processes = &tr.table.processes;
		trace_open_io(cfg->sink);
		threads = cfg->threads ? cfg->threads : default_threads();
	}
	tr.nworkers = threads < 1		   ? 1 :
		      threads > TRACER_MAX_THREADS ? TRACER_MAX_THREADS :
						     threads;
	self = &tr.workers[0];
	if (worker_init(&tr, 0, procfd) < 0)
		tr.nworkers = 1;
	/* Before the other threads run: none is over while it lives. */
	lock(&tr);
	tracee_get(&tr.table, main_pid, getpid());
	unlock(&tr);
	started = 0;
	if (tr.nworkers > 1)
		result->threads = start_workers(&tr, procfd, &started);
	if (result->threads < 2) {
		/* None could start (a pids limit, say): they have ended.  Our
		 * doorbell, a tracee, would keep our wait from ever ending. */
		tr.nworkers = result->threads = 1;
		mailbox_close(&tr.workers[0].box);
	} else if (result->threads < tr.nworkers) {
		/* A process handed to a thread that is not there would wait
		 * for ever: none changes thread. */
		tr.threads_missing = true;
	}
	serve(&tr);
	if (tr.nworkers > 1) {
		stop_workers(&tr, started);
		tr.nworkers = 1;
		tr.quit = false;
		serve(&tr); /* untraced orphans left to reap */
	} else if (started > 0) {
		stop_workers(&tr, started);
	}
	finish_lost(&tr);
	resume_pending(&tr.workers[0]);
	follow_release(&tr.workers[0].follow);
	sum_follow(&tr, started + 1);
	result->max_concurrent = tr.table.max_live_processes;
	if (tr.io_on) {
		result->syscall_stops = tr.io.syscall_stops;
		result->unknown_syscalls = tr.io.unknown_syscalls;
		result->used_io_uring = tr.io.used_io_uring;
		result->used_linux_aio = tr.io.used_linux_aio;
		iotrace_release(&tr.io);
	}
	proc_table_release(&tr.table);
	close(procfd);
	free(tr.workers[0].resumes);
	pthread_mutex_destroy(&tr.lock);
	return result->error[0] ? -1 : 0;
}
