// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostinfo.h"
#include "process.h"
#include "unit.h"

static pid_t start_stopped_tracee(void)
{
	pid_t child = fork();
	int status = 0;

	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0L, 0L) == 0)
			raise(SIGSTOP);
		_exit(0);
	}
	CHECK_INT(waitpid(child, &status, 0), child);
	CHECK(WIFSTOPPED(status));
	return child;
}

static void end_tracee(pid_t child)
{
	CHECK_INT(kill(child, SIGKILL), 0);
	CHECK_INT(waitpid(child, NULL, 0), child);
}

/*
 * A fork event can name a child that has come and gone: it must not come
 * back as a process that never ends.  Nor may a pid that is not traced by
 * us (a reused one), whether running or a zombie; one already known comes
 * back as it is.
 */
static void process_event_child_gone(void)
{
	struct proc_table pt;
	int procfd = proc_open_root();
	pid_t child;
	struct process *self;
	siginfo_t info;

	CHECK(procfd >= 0);
	proc_table_init(&pt, procfd, NULL);
	self = tracee_get(&pt, getpid(), 0)->proc;
	child = fork();
	if (child == 0)
		_exit(0);
	CHECK(tracee_get_child(&pt, getppid(), self) == NULL);
	/* Exited, not reaped: a zombie that was never ours. */
	CHECK_INT(waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);
	CHECK(tracee_get_child(&pt, child, self) == NULL);
	CHECK_INT(waitpid(child, NULL, 0), child);
	CHECK(tracee_get_child(&pt, child, self) == NULL);
	CHECK_UINT(pt.processes.count, 1);
	CHECK(tracee_get_child(&pt, getpid(), self)->proc == self);
	CHECK_UINT(pt.processes.count, 1);
	proc_table_release(&pt);
	close(procfd);
}

/*
 * A child we trace is made on the parent's event when its own stop has not
 * come yet, and only for the process that made it: a pid reused by a
 * tracee of another parent is not that parent's child.
 */
static void process_event_child_traced(void)
{
	struct proc_table pt;
	int procfd = proc_open_root();
	struct process *self, stranger = { 0 };
	struct tracee *t;
	pid_t child;

	CHECK(procfd >= 0);
	proc_table_init(&pt, procfd, NULL);
	self = tracee_get(&pt, getpid(), 0)->proc;
	stranger.rec.pid = 1;
	child = start_stopped_tracee();
	CHECK(tracee_get_child(&pt, child, &stranger) == NULL);
	CHECK_UINT(pt.processes.count, 1);
	t = tracee_get_child(&pt, child, self);
	CHECK(t != NULL);
	if (t) {
		CHECK_INT(t->proc->rec.pid, child);
		CHECK_INT(t->proc->rec.ppid, getpid());
	}
	CHECK_UINT(pt.processes.count, 2);
	CHECK(tracee_get_child(&pt, child, self) == t);
	CHECK(tracee_get_child(&pt, child, &stranger) == NULL);
	end_tracee(child);
	proc_table_release(&pt);
	close(procfd);
}

static void *spin(void *arg)
{
	for (;;)
		pause();
	return arg;
}

enum ending { BY_EXIT_GROUP, BY_THREAD_EXIT, BY_SIGNAL };

/* A traced child with a second thread, ending its main thread as told. */
static void run_ending(enum ending how)
{
	pthread_t thread;

	if (ptrace(PTRACE_TRACEME, 0, 0L, 0L) < 0 || raise(SIGSTOP) != 0 ||
	    pthread_create(&thread, NULL, spin, NULL) != 0)
		_exit(2);
	/* The syscall, not exit(): our stdio buffers are the parent's too. */
	if (how == BY_EXIT_GROUP)
		syscall(SYS_exit_group, 0);
	if (how == BY_SIGNAL)
		raise(SIGTERM);
	syscall(SYS_exit, 0);
	_exit(3);
}

/*
 * Traces the child as the tracer does (its threads made at the clone
 * event) and returns what process_exit_stop says at its main thread's
 * exit stop: whether the process was measured there.
 */
static bool measured_at_main_exit(enum ending how)
{
	struct cgroup_resolver cgroups;
	struct proc_table pt;
	int procfd = proc_open_root();
	pid_t child = fork(), tid;
	int status;
	bool measured = false, seen = false;

	if (child == 0)
		run_ending(how);
	cgroup_resolver_init(&cgroups);
	proc_table_init(&pt, procfd, &cgroups);
	CHECK_INT(waitpid(child, &status, 0), child);
	CHECK_INT(ptrace(PTRACE_SETOPTIONS, child, 0L,
			 (long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE)),
		  0);
	CHECK_INT(ptrace(PTRACE_CONT, child, 0L, 0L), 0);
	while (!seen && (tid = waitpid(-1, &status, __WALL)) > 0) {
		struct tracee *t;
		unsigned long msg = 0;
		int sig = WIFSTOPPED(status) ? WSTOPSIG(status) : 0;

		if (!WIFSTOPPED(status))
			continue;
		t = tracee_get(&pt, tid, 0);
		if ((unsigned)status >> 16 == PTRACE_EVENT_CLONE &&
		    ptrace(PTRACE_GETEVENTMSG, tid, 0L, &msg) == 0)
			CHECK(tracee_get_child(&pt, (pid_t)msg, t->proc) !=
			      NULL);
		if ((unsigned)status >> 16 == PTRACE_EVENT_EXIT &&
		    tid == child) {
			CHECK_INT(t->proc->live_threads, 2);
			measured = process_exit_stop(&pt, t);
			CHECK(measured == t->proc->rec.usage.measured);
			seen = true;
		}
		/* Event stops and a new thread's SIGSTOP carry no signal. */
		if (sig == SIGTRAP || sig == SIGSTOP)
			sig = 0;
		ptrace(PTRACE_CONT, tid, 0L, (long)sig);
	}
	CHECK(seen);
	kill(child, SIGKILL);
	/* A killed thread may still make an exit stop: let it go on. */
	while ((tid = waitpid(-1, &status, __WALL)) > 0)
		if (WIFSTOPPED(status))
			ptrace(PTRACE_CONT, tid, 0L, 0L);
	proc_table_release(&pt);
	close(procfd);
	return measured;
}

/*
 * The threads an exit_group or a fatal signal kills may get no exit stop
 * of their own: the process is measured at the stop of the thread that
 * ends the group, its other thread still counted live.  A thread's own
 * exit ends only itself.
 */
static void process_exit_ending_the_group(void)
{
	CHECK(measured_at_main_exit(BY_EXIT_GROUP));
	CHECK(measured_at_main_exit(BY_SIGNAL));
	CHECK(!measured_at_main_exit(BY_THREAD_EXIT));
}

static pid_t start_paused(void)
{
	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(0);
	}
	return child;
}

/*
 * CLONE_PARENT makes the parent's sibling, a child of the parent's parent
 * as it is now: a parent re-parented since it was recorded (its recorded
 * ppid stale) still made it.
 */
static void process_event_sibling_of_reparented(void)
{
	struct proc_table pt;
	int procfd = proc_open_root();
	pid_t parent_pid = start_paused(), sibling_pid = start_paused();
	struct process parent = { 0 };
	struct tracee *sibling;

	CHECK(procfd >= 0);
	proc_table_init(&pt, procfd, NULL);
	parent.rec.pid = parent_pid;
	parent.rec.ppid = 999999; /* its parent when first seen, since gone */
	sibling = tracee_get(&pt, sibling_pid, 0);
	CHECK(tracee_get_child(&pt, sibling_pid, &parent) == sibling);
	kill(parent_pid, SIGKILL);
	kill(sibling_pid, SIGKILL);
	CHECK_INT(waitpid(parent_pid, NULL, 0), parent_pid);
	CHECK_INT(waitpid(sibling_pid, NULL, 0), sibling_pid);
	proc_table_release(&pt);
	close(procfd);
}

const struct unit_test process_tests[] = {
	UNIT_TEST(process_event_child_gone),
	UNIT_TEST(process_event_child_traced),
	UNIT_TEST(process_exit_ending_the_group),
	UNIT_TEST(process_event_sibling_of_reparented),
	UNIT_END,
};
