// SPDX-License-Identifier: MIT
/*
 * Things that happen to a process while the tracer adds a filter to it
 * (ptrace/inject.c): each child takes sixty new descriptor numbers on a
 * traced file (one filter each under the scoped filter) while
 *
 *   injectrace stopcont FILE N   its parent stops and continues it 30 times
 *   injectrace exec FILE N       another of its threads execs /bin/true
 *
 * Prints how many of the N children did not end well (stopped for good,
 * killed); exits 0.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void take_numbers(const char *path)
{
	int fd = open(path, O_RDONLY);

	for (int i = 0; i < 60; i++)
		dup2(fd, 4 + i);
}

static void pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/* Whether the child ended within 2 s of its last SIGCONT. */
static bool ends(pid_t pid)
{
	int status;

	for (int i = 0; i < 200; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0;
		pause_us(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return false;
}

static bool stopcont_child(const char *path, int k)
{
	int go[2];
	char c;
	pid_t pid;

	if (pipe(go) < 0)
		return false;
	pid = fork();
	if (pid == 0) {
		if (write(go[1], "x", 1) != 1)
			_exit(2);
		take_numbers(path);
		_exit(0);
	}
	if (pid < 0 || read(go[0], &c, 1) != 1)
		return false;
	for (int j = 0; j < 30; j++) {
		kill(pid, SIGSTOP);
		pause_us((j * 13 + k * 7) % 150);
		kill(pid, SIGCONT);
		pause_us((j * 29 + k) % 100);
	}
	close(go[0]);
	close(go[1]);
	return ends(pid);
}

static long exec_delay_us;

static void *exec_true(void *arg)
{
	(void)arg;
	pause_us(exec_delay_us);
	execl("/bin/true", "true", (char *)NULL);
	return NULL;
}

static bool exec_child(const char *path, int k)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		pthread_t t;

		exec_delay_us = (k * 37) % 1500;
		if (pthread_create(&t, NULL, exec_true, NULL) != 0)
			_exit(2);
		take_numbers(path);
		pause();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	int n, bad = 0;

	if (argc != 4)
		return 2;
	n = atoi(argv[3]);
	for (int k = 0; k < n; k++) {
		bool ok = strcmp(argv[1], "exec") == 0 ?
				  exec_child(argv[2], k) :
				  stopcont_child(argv[2], k);

		bad += !ok;
	}
	printf("bad %d of %d\n", bad, n);
	return 0;
}
