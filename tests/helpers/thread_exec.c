// SPDX-License-Identifier: MIT
/* A non-leader thread calls execv(argv[1], argv + 1) while the main thread
 * and a third thread are still running. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static char **cmd;

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *do_exec(void *arg)
{
	(void)arg;
	usleep(20000);
	execv(cmd[0], cmd);
	perror("execv");
	_exit(99);
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc < 2) {
		fprintf(stderr, "usage: thread_exec PROGRAM [ARGS...]\n");
		return 2;
	}
	cmd = argv + 1;
	pthread_create(&a, NULL, spin, NULL);
	pthread_create(&b, NULL, do_exec, NULL);
	for (;;)
		pause();
}
