// SPDX-License-Identifier: MIT
/*
 * What a task sees of its CPU mask right after a storm of reads, which
 * makes an unprivileged tracer pin the reading thread for CPU following
 * (ptrace/cpufollow.h):
 *   affinity thread FILE: the main thread reads, then makes a thread that
 *     at once prints the CPUs its mask allows ("thread N");
 *   affinity exec FILE PROGRAM [ARGS...]: a second thread reads, then
 *     execs PROGRAM (the exec gives it the leader's tid).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define STORM 2000

static int data_fd = -1;
static char **program;

static void storm(void)
{
	char buf[1024];

	for (int i = 0; i < STORM; i++)
		if (pread(data_fd, buf, sizeof(buf), 0) < 0) {
			perror("pread");
			_exit(1);
		}
}

static void *print_cpus(void *arg)
{
	cpu_set_t set;

	(void)arg;
	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		perror("sched_getaffinity");
		_exit(1);
	}
	printf("thread %d\n", CPU_COUNT(&set));
	return NULL;
}

static void *read_then_exec(void *arg)
{
	(void)arg;
	storm();
	execv(program[0], program);
	perror("execv");
	_exit(99);
}

static int start(void *(*fn)(void *))
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, NULL) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	return pthread_join(t, NULL) != 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 ||
	    (strcmp(argv[1], "thread") && strcmp(argv[1], "exec")) ||
	    (!strcmp(argv[1], "exec") && argc < 4)) {
		fprintf(stderr, "usage: affinity thread FILE | "
				"affinity exec FILE PROGRAM [ARGS...]\n");
		return 2;
	}
	data_fd = open(argv[2], O_RDONLY);
	if (data_fd < 0) {
		perror(argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "exec")) {
		program = argv + 3;
		return start(read_then_exec); /* the exec ends it */
	}
	storm();
	return start(print_cpus);
}
