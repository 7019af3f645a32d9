// SPDX-License-Identifier: MIT
/*
 * slowfork MAPS MAX [SIBLINGS]: maps MAPS one-page regions that cannot
 * merge, so that each fork copies MAPS areas and takes milliseconds, then
 * forks MAX children as fast as it can, each waiting in pause() for a
 * signal, and then waits for them.  A signal sent to it alone then most
 * likely comes in the middle of a fork: the kernel gives it to the parent
 * only, and the child's pid is given out after the sender may have
 * looked.
 *
 * SIBLINGS children forked first (before the mapping, so quickly) each,
 * once it has had SIGTERM, spin until the next child's pid is given out
 * and then exit.  The kernel writes that pid to a shared word just before
 * it wakes the child and stops this process for its fork event
 * (CLONE_PARENT_SETTID): their deaths come while the child is at its
 * first stop and the event is still to come.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t *last_child;
static volatile sig_atomic_t termed;

static void note_term(int sig)
{
	(void)sig;
	termed = 1;
}

/* Until a child is forked after the SIGTERM, or the parent is gone. */
static void sibling(pid_t parent)
{
	pid_t seen;

	signal(SIGTERM, note_term);
	while (!termed)
		pause();
	seen = *last_child;
	while (*last_child == seen && getppid() == parent)
		;
	_exit(0);
}

static int fork_siblings(long count)
{
	pid_t me = getpid();

	for (long i = 0; i < count; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0)
			sibling(me);
	}
	return 0;
}

/* Neighbouring regions of other protections are never merged into one. */
static int map_regions(long count)
{
	long page = sysconf(_SC_PAGESIZE);

	for (long i = 0; i < count; i++) {
		int prot = i % 2 ? PROT_READ : PROT_READ | PROT_WRITE;
		char *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		p[0] = 1; /* a page to copy the table of */
		if (mprotect(p, (size_t)page, prot) < 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long maps, max, siblings = 0;

	if (argc < 3 || argc > 4 || (maps = atol(argv[1])) < 0 ||
	    (max = atol(argv[2])) < 1 ||
	    (argc == 4 && (siblings = atol(argv[3])) < 0)) {
		fprintf(stderr, "usage: slowfork MAPS MAX [SIBLINGS]\n");
		return 2;
	}
	last_child = mmap(NULL, sizeof(*last_child), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (last_child == MAP_FAILED || fork_siblings(siblings) < 0 ||
	    map_regions(maps) < 0) {
		perror("slowfork");
		return 1;
	}
	for (long i = 0; i < max; i++) {
		long pid = syscall(SYS_clone, CLONE_PARENT_SETTID | SIGCHLD, 0,
				   last_child, 0, 0);

		if (pid < 0) {
			perror("slowfork: clone");
			break;
		}
		if (pid == 0) {
			pause();
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
