// SPDX-License-Identifier: MIT
/*
 * Processes whose real parent is iowrap (a child subreaper) while another
 * tracer thread traces them: the first thread's wait sees their stops.
 *
 *   orphans fds FILE N     N orphans, each opening FILE on 60 new
 *                          descriptors, 5 times (under the scoped filter,
 *                          a filter is added to each, many times)
 *   orphans cparent FILE   an orphan making 50 children with
 *                          clone(CLONE_PARENT): iowrap is their parent
 *   orphans signal FILE    two children, one of them handed to another
 *                          tracer thread, send iowrap SIGUSR1: a
 *                          tracee's signal, not forwarded to this (main)
 *                          process; prints how many it got
 *   orphans lastwords FILE N
 *                          N children in turn send iowrap SIGUSR1 and
 *                          exit at once, while one other reads FILE
 *                          (keeping this process's tracer thread busy:
 *                          they are handed over) and one spins: the
 *                          sender is often reaped before iowrap's other
 *                          threads run again; prints how many it got
 * Every open reads 4096 bytes (FILE must be larger).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[4096];

static void read_once(const char *file)
{
	int fd = open(file, O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf)) != sizeof(buf))
		_exit(3);
	close(fd);
}

/* Until its parent is gone (it exits at once): then iowrap's. */
static void wait_orphaned(pid_t parent)
{
	while (getppid() == parent)
		usleep(1000);
}

static int many_fds(const char *file, int n)
{
	pid_t me = getpid();

	for (int k = 0; k < n; k++) {
		if (fork() != 0)
			continue;
		wait_orphaned(me);
		for (int r = 0; r < 5; r++) {
			int fds[60];

			for (int i = 0; i < 60; i++) {
				fds[i] = open(file, O_RDONLY);
				if (fds[i] < 0 ||
				    read(fds[i], buf, sizeof(buf)) !=
					    sizeof(buf))
					_exit(3);
			}
			for (int i = 0; i < 60; i++)
				close(fds[i]);
		}
		_exit(0);
	}
	return 0;
}

static int clone_parent(const char *file)
{
	pid_t me = getpid();

	if (fork() != 0)
		return 0;
	wait_orphaned(me);
	for (int k = 0; k < 50; k++) {
		if (syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0) ==
		    0) {
			read_once(file);
			_exit(0);
		}
		if (k % 2)
			usleep(100);
	}
	_exit(0);
}

static volatile sig_atomic_t got;

static void count(int sig)
{
	(void)sig;
	got++;
}

/* A busy first child, then a second one (one of them on another tracer
 * thread than this process's) signal iowrap. */
static int signal_iowrap(const char *file)
{
	pid_t iowrap = getppid(), busy, second;
	int ready[2];
	char c;

	signal(SIGUSR1, count);
	if (pipe(ready) < 0)
		return 2;
	busy = fork();
	if (busy == 0) {
		for (int i = 0; i < 2000; i++) {
			read_once(file);
			if (i == 0)
				kill(iowrap, SIGUSR1);
			if (i == 0 && write(ready[1], "x", 1) != 1)
				_exit(3);
		}
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1)
		return 2;
	second = fork();
	if (second == 0) {
		kill(iowrap, SIGUSR1);
		_exit(0);
	}
	waitpid(second, NULL, 0);
	waitpid(busy, NULL, 0);
	usleep(100000); /* a forwarded signal would be here by now */
	printf("SIGUSR1 received %d\n", (int)got);
	return 0;
}

static pid_t busy_child(const char *file)
{
	pid_t pid = fork();

	if (pid == 0)
		for (;;)
			if (file)
				read_once(file);
	return pid;
}

/* Each child's signal is its last act: whether it came from a tracee
 * must not depend on iowrap looking before the child is gone. */
static int last_words(const char *file, int n)
{
	pid_t iowrap = getppid(), spin[2], child;

	signal(SIGUSR1, count);
	spin[0] = busy_child(file);
	spin[1] = busy_child(NULL);
	for (int i = 0; i < n; i++) {
		child = fork();
		if (child == 0) {
			kill(iowrap, SIGUSR1);
			_exit(0);
		}
		if (child > 0)
			waitpid(child, NULL, 0);
	}
	for (int i = 0; i < 2; i++)
		if (spin[i] > 0) {
			kill(spin[i], SIGKILL);
			waitpid(spin[i], NULL, 0);
		}
	usleep(100000); /* a forwarded signal would be here by now */
	printf("SIGUSR1 received %d\n", (int)got);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "fds") == 0)
		return many_fds(argv[2], argc > 3 ? atoi(argv[3]) : 4);
	if (argc == 3 && strcmp(argv[1], "cparent") == 0)
		return clone_parent(argv[2]);
	if (argc == 3 && strcmp(argv[1], "signal") == 0)
		return signal_iowrap(argv[2]);
	if (argc == 4 && strcmp(argv[1], "lastwords") == 0)
		return last_words(argv[2], atoi(argv[3]));
	fprintf(stderr,
		"usage: orphans fds|cparent|signal|lastwords FILE [N]\n");
	return 2;
}
