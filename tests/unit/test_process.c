// SPDX-License-Identifier: MIT
#include <signal.h>
#include <sys/ptrace.h>
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

const struct unit_test process_tests[] = {
	UNIT_TEST(process_event_child_gone),
	UNIT_TEST(process_event_child_traced),
	UNIT_END,
};
