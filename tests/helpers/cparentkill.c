// SPDX-License-Identifier: MIT
/*
 * cparentkill FLAGS: a creator killed in its clone(CLONE_PARENT), its
 * child held at its first stop for a clone event that never comes, while
 * the child's parent (this process) runs.
 *
 * FLAGS is a file of at least 4 zero bytes the test reads and writes as
 * the steps go (through a shared mapping: no traced call in the steps):
 *   byte 0 'r'  written by the creator, a child of this process, once it
 *               runs: the test may stop iowrap (SIGSTOP);
 *   byte 1 'g'  written by the test once iowrap is stopped: the creator
 *               clones with CLONE_PARENT, so the new child is this
 *               process's, and stops for its event, which iowrap, stopped,
 *               cannot have taken;
 *   byte 2 'k'  written by this process once it has seen the child's pid
 *               (CLONE_PARENT_SETTID, written before the kernel wakes the
 *               child and stops the creator) and SIGKILLed the creator:
 *               the event stop is gone (a trace stop that a SIGKILL ends
 *               before the tracer has waited for it), and the test may
 *               let iowrap go on (SIGCONT).
 * This process spins, running, until the creator has been reaped (only
 * after iowrap has waited for its death) and SPIN_AFTER_MS more, so that
 * iowrap finds it running when it handles that death, and then waits in
 * wait4 for the child.  SIGCHLD is blocked: its delivery would stop this
 * process for iowrap (a traced process stops for an ignored signal too)
 * just as iowrap handles the death (iowrap's wait for it sends the
 * SIGCHLD), which it did in 2 of 8 rounds.  Prints "creator killed,
 * child N exited S".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SPIN_AFTER_MS 300

static volatile char *flags;
static volatile pid_t *child_tid; /* CLONE_PARENT_SETTID writes it */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wait_flag(int at, char value)
{
	while (flags[at] != value)
		;
}

/* Never returns: killed in the clone, or by this process after it. */
static void creator(void)
{
	long pid;

	flags[0] = 'r';
	wait_flag(1, 'g');
	pid = syscall(SYS_clone, CLONE_PARENT | CLONE_PARENT_SETTID | SIGCHLD,
		      0, child_tid, 0, 0);
	if (pid == 0)
		_exit(0); /* the child */
	for (;;)
		pause();
}

/* Running (no blocking call) until the creator has been reaped, and
 * SPIN_AFTER_MS more. */
static int reap_spinning(pid_t pid)
{
	int64_t until;
	int status;
	pid_t got;

	while ((got = waitpid(pid, &status, WNOHANG)) == 0)
		;
	if (got != pid || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		return -1;
	until = now_ms() + SPIN_AFTER_MS;
	while (now_ms() < until)
		;
	return 0;
}

static int map_flags(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	flags = mmap(NULL, 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	child_tid = mmap(NULL, sizeof(*child_tid), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return flags == MAP_FAILED || child_tid == MAP_FAILED ? -1 : 0;
}

int main(int argc, char **argv)
{
	pid_t pid, child;
	sigset_t chld;
	int status;

	if (argc != 2) {
		fprintf(stderr, "usage: cparentkill FLAGS\n");
		return 2;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0 || map_flags(argv[1]) < 0) {
		perror("cparentkill");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("cparentkill: fork");
		return 1;
	}
	if (pid == 0)
		creator();
	while (!(child = *child_tid))
		;
	kill(pid, SIGKILL);
	flags[2] = 'k';
	if (reap_spinning(pid) < 0 || waitpid(child, &status, 0) != child) {
		fprintf(stderr, "cparentkill: creator or child lost\n");
		return 1;
	}
	printf("creator killed, child %d exited %d\n", (int)child,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
