// SPDX-License-Identifier: MIT
/*
 * Threads started while the main thread keeps iowrap's tracer thread busy
 * (it reads in a loop), so that they are handed to another one.
 *
 *   threadio readers FILE N   N threads each read FILE 200 times with
 *                             pread, and print "TID COUNT"
 *   threadio exec FILE        a thread execs cat FILE (which ends the
 *                             main thread)
 *   threadio execrace FILE    4 processes each start 2 threads and exec
 *                             /bin/true at once from the main thread,
 *                             while the new threads may be being handed
 *                             over
 *
 * FILE must hold at least 4096 bytes.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define READS 200

static const char *file;
static int busy_fd;
static atomic_int done;

static void busy_read(void)
{
	char buf[4096];

	if (pread(busy_fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		_exit(3);
}

static void *reader(void *arg)
{
	char buf[4096];
	int fd = open(file, O_RDONLY), n = 0;

	(void)arg;
	if (fd < 0)
		_exit(3);
	for (int i = 0; i < READS; i++)
		n += pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf);
	close(fd);
	printf("%d %d\n", gettid(), n);
	atomic_fetch_add(&done, 1);
	return NULL;
}

static void *exec_cat(void *arg)
{
	(void)arg;
	execl("/bin/cat", "cat", file, (char *)NULL);
	_exit(99);
}

/* Reads, starts n threads running fn, and reads until they are done (an
 * exec ends it first). */
static int run(int n, void *(*fn)(void *))
{
	pthread_t t[16];

	busy_fd = open(file, O_RDONLY);
	if (busy_fd < 0 || n < 1 || n > 16)
		return 2;
	for (int i = 0; i < 100; i++)
		busy_read();
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, fn, NULL) != 0)
			return 2;
		busy_read();
	}
	while (atomic_load(&done) < n)
		busy_read();
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static void *read_some(void *arg)
{
	for (int i = 0; i < 20; i++)
		busy_read();
	return arg;
}

/* An exec while a sibling is parked for another tracer thread must not
 * wait for a seize that waits for the exec. */
static void exec_while_threads_start(void)
{
	pthread_t t[2];

	busy_fd = open(file, O_RDONLY);
	if (busy_fd < 0)
		_exit(2);
	for (int i = 0; i < 100; i++)
		busy_read();
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, read_some, NULL) != 0)
			_exit(2);
	execl("/bin/true", "true", (char *)NULL);
	_exit(99);
}

static int execrace(void)
{
	int status, failed = 0;

	for (int i = 0; i < 4; i++)
		if (fork() == 0)
			exec_while_threads_start();
	for (int i = 0; i < 4; i++)
		if (wait(&status) < 0 || status != 0)
			failed = 1;
	return failed;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "readers") == 0) {
		file = argv[2];
		return run(atoi(argv[3]), reader);
	}
	if (argc == 3 && strcmp(argv[1], "exec") == 0) {
		file = argv[2];
		return run(1, exec_cat);
	}
	if (argc == 3 && strcmp(argv[1], "execrace") == 0) {
		file = argv[2];
		return execrace();
	}
	fprintf(stderr,
		"usage: threadio readers FILE N | exec FILE | execrace FILE\n");
	return 2;
}
