// SPDX-License-Identifier: MIT
/*
 * slowfork MAPS MAX: maps MAPS one-page regions that cannot merge, so
 * that each fork copies MAPS areas and takes milliseconds, then forks MAX
 * children as fast as it can, each waiting in pause() for a signal, and
 * then waits for them.  A signal sent to it alone then most likely comes
 * in the middle of a fork: the kernel gives it to the parent only, and
 * the child's pid is given out after the sender may have looked.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

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
	long maps, max;

	if (argc != 3 || (maps = atol(argv[1])) < 0 ||
	    (max = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: slowfork MAPS MAX\n");
		return 2;
	}
	if (map_regions(maps) < 0) {
		perror("slowfork: mmap");
		return 1;
	}
	for (long i = 0; i < max; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("slowfork: fork");
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
