// SPDX-License-Identifier: MIT
/*
 * stopsender: gets a SIGSTOP from a process that is gone, reaped, before
 * the signal can reach it, then prints "got-2" once continued.
 *
 * The sender S is an orphaned grandchild, so the subreaper (iowrap)
 * reaps it.  The SIGSTOP waits for this process while it sits in
 * vfork(), whose wait no signal but SIGKILL ends; its vfork child V lets
 * S send, and returns only once S's pid is free (kill(S, 0) fails), that
 * is, reaped.  Then the signal arrives from a pid that no process has.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void fail(const char *what)
{
	perror(what);
	exit(2);
}

/* S: waits for the go, sends SIGSTOP to target, ends. */
static void sender(int go, pid_t target)
{
	char c;

	if (read(go, &c, 1) != 1 || kill(target, SIGSTOP) < 0)
		_exit(3);
	_exit(0);
}

/* Forks the middle process, which forks S and ends at once; S's pid. */
static pid_t start_orphan_sender(int go, pid_t target)
{
	int pid_pipe[2];
	pid_t middle, s = 0;

	if (pipe(pid_pipe) < 0)
		fail("pipe");
	middle = fork();
	if (middle < 0)
		fail("fork");
	if (middle == 0) {
		pid_t child = fork();

		if (child == 0)
			sender(go, target);
		if (child < 0 ||
		    write(pid_pipe[1], &child, sizeof(child)) != sizeof(child))
			_exit(1);
		_exit(0);
	}
	if (waitpid(middle, NULL, 0) != middle ||
	    read(pid_pipe[0], &s, sizeof(s)) != sizeof(s) || s <= 0)
		fail("middle process");
	close(pid_pipe[0]);
	close(pid_pipe[1]);
	return s;
}

int main(void)
{
	const struct timespec nap = { .tv_nsec = 1000000 };
	int go[2];
	pid_t s, v;

	if (pipe(go) < 0)
		fail("pipe");
	s = start_orphan_sender(go[0], getpid());
	v = vfork();
	if (v < 0)
		fail("vfork");
	if (v == 0) {
		if (write(go[1], "g", 1) != 1)
			_exit(1);
		/* 10 s at most: S reaped, or this test is broken. */
		for (int i = 0;
		     i < 10000 && (kill(s, 0) == 0 || errno != ESRCH); i++)
			nanosleep(&nap, NULL);
		_exit(0);
	}
	/* The SIGSTOP came here; continued, on. */
	printf("got-%d\n", 1 + 1);
	return 0;
}
