// SPDX-License-Identifier: MIT
/*
 * intrcall MODE: an open(2) of a FIFO, ff in the working directory,
 * that sleeps for its writer and is interrupted three times by a signal
 * before a child opens the other end.  Prints "eintr N": the times the
 * open failed with EINTR (and was made again).
 *
 *   restart    SIGALRM's handler has SA_RESTART: the kernel restarts the
 *              open each time; it fails never
 *   eintr      the handler has no SA_RESTART: the open fails 3 times
 *   nohandler  SIGURG, ignored by default, no handler: restarted
 *   stopcont   SIGSTOP, then SIGCONT, whose handler has no SA_RESTART:
 *              the stop restarts nothing, SIGCONT's handler fails the
 *              open 3 times (the handler came after the exit stop)
 *
 * The child sends each signal while the open sleeps (/proc/PPID/syscall
 * names it and /proc/PPID/stat says S), and the next one only once the
 * last is gone from the pending set: handled, or ignored.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIGNALS 3

static void on_signal(int sig)
{
	(void)sig;
}

/* The start of a /proc file, NUL-terminated; 0 or -1. */
static int read_small(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	return fclose(f) == 0 && n > 0 ? 0 : -1;
}

/* Whether pid is stopped (T, or t under a tracer). */
static bool stopped(pid_t pid)
{
	char path[64], buf[4096], *state;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return read_small(path, buf, sizeof(buf)) == 0 &&
	       (state = strrchr(buf, ')')) && state[1] == ' ' &&
	       (state[2] == 'T' || state[2] == 't');
}

/* sig, or SIGSTOP and, once stopped, SIGCONT. */
static void interrupt(pid_t pid, int sig)
{
	const struct timespec nap = { .tv_nsec = 1000000 };

	if (sig != SIGCONT) {
		kill(pid, sig);
		return;
	}
	kill(pid, SIGSTOP);
	for (int i = 0; i < 10000 && !stopped(pid); i++)
		nanosleep(&nap, NULL);
	kill(pid, SIGCONT);
}

/* Whether pid sleeps in openat with sig not pending for it. */
static bool asleep_in_open(pid_t pid, int sig)
{
	char path[64], buf[4096], *state, *pnd;
	unsigned long long pending = 0;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if (read_small(path, buf, sizeof(buf)) < 0 ||
	    strtol(buf, NULL, 10) != SYS_openat)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof(buf)) < 0 ||
	    !(state = strrchr(buf, ')')) || state[1] != ' ' || state[2] != 'S')
		return false;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return false;
	if ((pnd = strstr(buf, "SigPnd:\t")))
		pending |= strtoull(pnd + 8, NULL, 16);
	if ((pnd = strstr(buf, "ShdPnd:\t")))
		pending |= strtoull(pnd + 8, NULL, 16);
	return !(pending & (1ull << (sig - 1)));
}

/* The child: three signals to an open asleep, then the FIFO's writer. */
static void interrupter(pid_t parent, int sig)
{
	const struct timespec nap = { .tv_nsec = 1000000 };
	int sent = 0, tries = 0, fd;

	/* 20 s at most: else this test is broken. */
	for (; sent < SIGNALS && tries < 20000; tries++) {
		if (asleep_in_open(parent, sig)) {
			interrupt(parent, sig);
			sent++;
		}
		nanosleep(&nap, NULL);
	}
	for (; !asleep_in_open(parent, sig) && tries < 20000; tries++)
		nanosleep(&nap, NULL);
	fd = open("ff", O_WRONLY);
	_exit(fd < 0 || sent != SIGNALS);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int sig = SIGALRM, eintr = 0, fd, status;
	pid_t child;

	if (argc != 2)
		goto usage;
	if (strcmp(argv[1], "restart") == 0)
		sa.sa_flags = SA_RESTART;
	else if (strcmp(argv[1], "nohandler") == 0)
		sig = SIGURG;
	else if (strcmp(argv[1], "stopcont") == 0)
		sig = SIGCONT;
	else if (strcmp(argv[1], "eintr") != 0)
		goto usage;
	if (sig != SIGURG && sigaction(sig, &sa, NULL) < 0)
		return 2;
	unlink("ff");
	if (mkfifo("ff", 0600) < 0)
		return 2;
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0)
		interrupter(getppid(), sig);
	while ((fd = open("ff", O_RDONLY)) < 0 && errno == EINTR)
		eintr++;
	if (fd < 0 || waitpid(child, &status, 0) != child || status != 0)
		return 3;
	printf("eintr %d\n", eintr);
	return 0;
usage:
	fprintf(stderr, "usage: intrcall restart|eintr|nohandler|stopcont\n");
	return 64;
}
