// SPDX-License-Identifier: MIT
#include <sys/wait.h>
#include <unistd.h>

#include "process.h"
#include "unit.h"

/*
 * A fork event can name a child that has come and gone: it must not come
 * back as a process that never ends.  Nor may a pid that is not traced by
 * us (a reused one); one already known comes back as it is.
 */
static void process_event_child_gone(void)
{
	struct proc_table pt;
	int procfd = proc_open_root();
	pid_t child;
	struct tracee *self;

	CHECK(procfd >= 0);
	proc_table_init(&pt, procfd, NULL);
	child = fork();
	if (child == 0)
		_exit(0);
	CHECK_INT(waitpid(child, NULL, 0), child);
	CHECK(tracee_get_child(&pt, child) == NULL);
	CHECK(tracee_get_child(&pt, getppid()) == NULL);
	CHECK_UINT(pt.processes.count, 0);
	self = tracee_get(&pt, getpid(), 0);
	CHECK(tracee_get_child(&pt, getpid()) == self);
	CHECK_UINT(pt.processes.count, 1);
	proc_table_release(&pt);
	close(procfd);
}

const struct unit_test process_tests[] = {
	UNIT_TEST(process_event_child_gone),
	UNIT_END,
};
