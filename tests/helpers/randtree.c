// SPDX-License-Identifier: MIT
/*
 * randtree SEED STEPS: a process tree drawn from SEED.  Each process takes
 * up to STEPS steps: fork a child (which does the same with fewer steps),
 * vfork a child that execs or exits at once, fork from a thread, start
 * and join threads, exec itself, or end: exit with a code drawn from the
 * seed, or die of SIGKILL or SIGTERM.  A parent waits for its child, or
 * lets it run on: an orphan that the subreaper takes.
 *
 * Each process prints, for procs.csv, lines made from what it knows
 * itself (one write each):
 *   PID start CREATOR   CREATOR is the process that forked it
 *   PID exec            before each exec of itself
 *   PID threads N       the threads it ran in all (itself included),
 *                       when it never execed
 *   PID end exit CODE | PID end signal SIG   just before it ends
 * Re-running itself: randtree SEED STEPS execs, with execs the ones so far.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t rng;
static int execs, threads_ran = 1;
static pid_t creator; /* what the next child prints as its creator */

static unsigned pick(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && n < (int)sizeof(line) && write(1, line, (size_t)n) != n)
		_exit(99);
}

static void run(int steps);

static void end(void)
{
	if (!execs)
		say("%d threads %d\n", getpid(), threads_ran);
	switch (pick(4)) {
	case 0:
		say("%d end signal %d\n", getpid(), SIGKILL);
		raise(SIGKILL);
		break;
	case 1:
		say("%d end signal %d\n", getpid(), SIGTERM);
		signal(SIGTERM, SIG_DFL);
		raise(SIGTERM);
		break;
	default:
		break;
	}
	{
		int code = (int)pick(4);

		say("%d end exit %d\n", getpid(), code);
		_exit(code);
	}
}

static void re_exec(int steps)
{
	char seed[32], left[16], count[16];

	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)rng);
	snprintf(left, sizeof(left), "%d", steps);
	snprintf(count, sizeof(count), "%d", execs + 1);
	say("%d exec\n", getpid());
	execl("/proc/self/exe", "randtree", seed, left, count, (char *)NULL);
	_exit(98);
}

/* A new process: starts, takes its steps, ends. */
static void child(int steps)
{
	rng ^= 0x9e3779b97f4a7c15ull;
	execs = 0;
	threads_ran = 1;
	say("%d start %d\n", getpid(), creator);
	run(steps);
	end();
}

static void fork_child(int steps)
{
	pid_t pid;

	creator = getpid();
	pid = fork();
	if (pid < 0)
		_exit(97);
	if (pid == 0)
		child(steps);
	if (pick(4) != 0)
		waitpid(pid, NULL, 0); /* else it may outlive us */
}

/* vfork: the child may only exec or _exit. */
static void vfork_child(int steps)
{
	char seed[32], left[16];
	pid_t pid;

	creator = getpid();
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)rng + 1);
	snprintf(left, sizeof(left), "%d", steps);
	pid = vfork();
	if (pid < 0)
		_exit(97);
	if (pid == 0) {
		/* The line and the exec or exit, nothing else. */
		char line[64];
		int n = snprintf(line, sizeof(line), "%d start %d\n%d exec\n",
				 getpid(), creator, getpid());

		if (write(1, line, (size_t)n) != n)
			_exit(99);
		execl("/proc/self/exe", "randtree", seed, left, "0", "fresh",
		      (char *)NULL);
		_exit(98);
	}
	waitpid(pid, NULL, 0);
}

static void *thread_main(void *arg)
{
	int steps = (int)(intptr_t)arg;

	if (pick(2))
		fork_child(steps);
	return NULL;
}

static void run_thread(int steps)
{
	pthread_t th;

	if (pthread_create(&th, NULL, thread_main, (void *)(intptr_t)steps) ||
	    pthread_join(th, NULL))
		_exit(96);
	threads_ran++;
}

static void run(int steps)
{
	while (steps-- > 0) {
		switch (pick(7)) {
		case 0:
		case 1:
			fork_child(steps / 2);
			break;
		case 2:
			vfork_child(steps / 2);
			break;
		case 3:
			run_thread(steps / 2);
			break;
		case 4:
			if (threads_ran == 1 && pick(2))
				re_exec(steps);
			break;
		case 5:
			if (pick(3) == 0)
				end();
			break;
		default:
			break;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	rng = strtoull(argv[1], NULL, 10) * 2654435761ull + 7;
	if (argc >= 4)
		execs = atoi(argv[3]);
	/* A vforked child's exec: its first. */
	if (argc == 5)
		execs = 1;
	if (argc == 3)
		say("%d start 0\n", getpid());
	run(atoi(argv[2]));
	end();
	return 0;
}
