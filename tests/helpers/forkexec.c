// SPDX-License-Identifier: MIT
/*
 * forkexec MS: six threads fork children as fast as they can (each exits
 * at once) while the first thread, after MS milliseconds, execs this
 * program again as "forkexec reap", which waits for every child the
 * process has and prints "reaped".  The exec kills the forking threads,
 * now and then one in the middle of a fork: the child is made, but its
 * creator never stops for the fork event.  A tracer that holds a new
 * child until that event must let it go at the exec, or the reaper waits
 * for ever.
 *
 * It execs once every forking thread has made a child, so that some are
 * always there (IOWRAP_TEST_LOSE_FORK_EVENTS makes each such a case).
 *
 * forkexec exit MS: the same, but the first thread ends the process
 * (exit_group) where it would exec.  A child of a thread killed in its
 * fork is then an orphan, iowrap's: a tracer that holds it waits for it,
 * and it for the tracer, for ever.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* With one forking thread none of 26 runs hung the old tracer; with six,
 * 1 to 3 of 100 did. */
#define FORKING_THREADS 6

/* Forking threads that have made a child, or tried. */
static atomic_int forked;

static void *fork_forever(void *arg)
{
	bool counted = false;

	(void)arg;
	for (;;) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		/* A fork that failed counts too: pids may have run out. */
		if (!counted) {
			counted = true;
			atomic_fetch_add(&forked, 1);
		}
	}
	return NULL;
}

static void wait_for_first_forks(void)
{
	const struct timespec tick = { 0, 100000 };

	while (atomic_load(&forked) < FORKING_THREADS)
		nanosleep(&tick, NULL);
}

static int reap(void)
{
	while (wait(NULL) > 0 || errno == EINTR)
		;
	if (errno != ECHILD) {
		perror("wait");
		return 1;
	}
	puts("reaped");
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec pause = { 0, 0 };
	pthread_t th;
	long ms;

	bool exit_instead;

	if (argc == 2 && strcmp(argv[1], "reap") == 0)
		return reap();
	exit_instead = argc == 3 && strcmp(argv[1], "exit") == 0;
	ms = argc == 2 || exit_instead ? strtol(argv[argc - 1], NULL, 10) : -1;
	if (ms < 0 || ms > 10000) {
		fprintf(stderr, "usage: forkexec [exit] MS | forkexec reap\n");
		return 64;
	}
	pause.tv_sec = ms / 1000;
	pause.tv_nsec = (ms % 1000) * 1000000L;
	for (int i = 0; i < FORKING_THREADS; i++) {
		if (pthread_create(&th, NULL, fork_forever, NULL) != 0) {
			fprintf(stderr, "forkexec: pthread_create failed\n");
			return 1;
		}
	}
	wait_for_first_forks();
	nanosleep(&pause, NULL);
	if (exit_instead) {
		puts("exiting");
		fflush(stdout);
		_exit(0);
	}
	execl("/proc/self/exe", argv[0], "reap", (char *)NULL);
	perror("execl");
	return 1;
}
