// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* What exit_ends_thread_group says at the child's main thread's exit. */
static bool ends_group_at_exit(enum ending how)
{
	pid_t child = fork(), tid;
	int status;
	bool ends = false, seen = false;

	if (child == 0)
		run_ending(how);
	CHECK_INT(waitpid(child, &status, 0), child);
	CHECK_INT(ptrace(PTRACE_SETOPTIONS, child, 0L,
			 (long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE)),
		  0);
	CHECK_INT(ptrace(PTRACE_CONT, child, 0L, 0L), 0);
	while (!seen && (tid = waitpid(-1, &status, __WALL)) > 0) {
		int sig = WIFSTOPPED(status) ? WSTOPSIG(status) : 0;

		if (!WIFSTOPPED(status))
			continue;
		if ((unsigned)status >> 8 ==
			    (SIGTRAP | PTRACE_EVENT_EXIT << 8) &&
		    tid == child) {
			ends = exit_ends_thread_group(tid);
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
	return ends;
}

/*
 * The threads an exit_group or a fatal signal kills may get no exit stop
 * of their own: the process is measured at the stop of the thread that
 * ends the group.  A thread's own exit ends only itself.
 */
static void process_exit_ending_the_group(void)
{
	CHECK(ends_group_at_exit(BY_EXIT_GROUP));
	CHECK(ends_group_at_exit(BY_SIGNAL));
	CHECK(!ends_group_at_exit(BY_THREAD_EXIT));
}

const struct unit_test process_tests[] = {
	UNIT_TEST(process_event_child_gone),
	UNIT_TEST(process_event_child_traced),
	UNIT_TEST(process_exit_ending_the_group),
	UNIT_END,
};
