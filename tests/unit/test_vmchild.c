// SPDX-License-Identifier: MIT
/*
 * The helpers that share iowrap's memory: the seccomp-order probe's child
 * and the tracer threads' doorbells (ptrace/vmchild.h).
 */
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mailbox.h"
#include "probe.h"
#include "unit.h"
#include "vmchild.h"

static volatile int written_by_child;

static int write_and_exit(void *arg)
{
	written_by_child = *(const int *)arg;
	vmchild_syscall(SYS_exit, 7, 0, 0, 0, 0);
	return 0;
}

/* What the child writes, the parent sees (a forked child's write it
 * would not); it ends as a forked child does, with its status. */
static void vmchild_shares_memory(void)
{
	static struct vmchild_stack stack;
	int value = 42, status = 0;
	pid_t pid = vmchild_start(write_and_exit, &value, &stack);

	if (!CHECK(pid > 0))
		return;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	CHECK_INT(written_by_child, 42);
}

/* Linux 4.8 moved the seccomp stop after the syscall-enter stop: the
 * probe must say so from what its child does, not fail quietly. */
static void vmchild_probe_tells_the_order(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (!CHECK(uname(&u) == 0) ||
	    !CHECK(sscanf(u.release, "%d.%d", &major, &minor) == 2))
		return;
	CHECK_INT(seccomp_stop_before_sysentry(),
		  major < 4 || (major == 4 && minor < 8) ? 1 : 0);
}

/* The next stop of the doorbell, or 0 if none came in ms milliseconds. */
static int doorbell_stop(pid_t pid, int ms)
{
	const struct timespec nap = { .tv_nsec = 1000000 };
	int status;

	for (int i = 0; i <= ms; i++) {
		if (waitpid(pid, &status, __WALL | WNOHANG) == pid)
			return WIFSTOPPED(status) ? WSTOPSIG(status) : -1;
		nanosleep(&nap, NULL);
	}
	return 0;
}

/*
 * A ring stops the doorbell (so that its owner's waitpid returns), again
 * after a rearm; any other signal, a forwarded SIGTERM say, does not.
 */
static void vmchild_doorbell_rings_for_its_signal_only(void)
{
	struct mailbox box;
	pid_t pid;

	if (!CHECK(mailbox_open(&box) == 0))
		return;
	pid = box.doorbell;
	CHECK(pid > 0);
	CHECK(kill(pid, SIGTERM) == 0);
	CHECK(kill(pid, SIGUSR2) == 0);
	CHECK_INT(doorbell_stop(pid, 200), 0);
	for (int ring = 0; ring < 2; ring++) {
		mailbox_ring(&box);
		CHECK_INT(doorbell_stop(pid, 10000), SIGUSR1);
		mailbox_rearm(&box);
	}
	CHECK_INT(doorbell_stop(pid, 50), 0);
	mailbox_close(&box);
	CHECK(kill(pid, 0) < 0);
}

const struct unit_test vmchild_tests[] = {
	UNIT_TEST(vmchild_shares_memory),
	UNIT_TEST(vmchild_probe_tells_the_order),
	UNIT_TEST(vmchild_doorbell_rings_for_its_signal_only),
	UNIT_END,
};
