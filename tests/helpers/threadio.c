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
 *   threadio leaderexit FILE  the main thread opens FILE, starts a thread
 *                             and ends (pthread_exit); once it is a
 *                             zombie the thread preads 100 bytes of FILE
 *                             at 0, reads 50, writes 7 bytes to
 *                             leaderexit.out (a relative path), closes
 *                             both and prints its tid
 *   threadio killwrite FILE   a thread writes 128 MiB to FILE in one call;
 *                             2 ms after it starts, the main thread calls
 *                             exit (exit_group), which cuts it short
 *   threadio appenders FILE   8 threads append 10 bytes at a time to FILE
 *                             (one O_APPEND description) until, 20 ms
 *                             after they were started, the main thread
 *                             calls _exit (exit_group)
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

/* Whether the main thread has ended: the kernel keeps it a zombie ('Z')
 * while other threads run. */
static int leader_gone(void)
{
	char path[64], buf[512], *state;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", getpid());
	f = fopen(path, "r");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	state = strrchr(buf, ')');
	return state && state[1] == ' ' && (state[2] == 'Z' || state[2] == 'X');
}

static void *after_leader(void *arg)
{
	int fd = *(int *)arg, out;
	char buf[100];

	for (int i = 0; i < 10000 && !leader_gone(); i++)
		usleep(1000);
	if (!leader_gone() || pread(fd, buf, 100, 0) != 100 ||
	    read(fd, buf, 50) != 50)
		_exit(3);
	out = open("leaderexit.out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (out < 0 || write(out, "7 bytes", 7) != 7)
		_exit(3);
	close(out);
	close(fd);
	printf("%d\n", gettid());
	exit(0);
}

static int leaderexit(void)
{
	static int fd;
	pthread_t t;

	fd = open(file, O_RDONLY);
	if (fd < 0 || pthread_create(&t, NULL, after_leader, &fd) != 0)
		return 2;
	pthread_exit(NULL);
}

#define KILLWRITE_BYTES (128u << 20)

static atomic_int writing;

static void *write_big(void *arg)
{
	char *buf = malloc(KILLWRITE_BYTES);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	(void)arg;
	if (!buf || fd < 0)
		_exit(3);
	memset(buf, 'k', KILLWRITE_BYTES);
	atomic_store(&writing, 1);
	if (write(fd, buf, KILLWRITE_BYTES) < 0)
		_exit(3);
	return NULL;
}

static int killwrite(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, write_big, NULL) != 0)
		return 2;
	while (!atomic_load(&writing))
		usleep(100);
	usleep(2000);
	exit(0);
}

#define APPENDERS 8

static void *append_for_ever(void *arg)
{
	int fd = *(int *)arg;

	while (write(fd, "0123456789", 10) >= 0)
		;
	return NULL;
}

static int appenders(void)
{
	static int fd;
	pthread_t t;

	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (fd < 0)
		return 2;
	for (int i = 0; i < APPENDERS; i++)
		if (pthread_create(&t, NULL, append_for_ever, &fd) != 0)
			return 2;
	usleep(20000);
	_exit(0);
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
	if (argc == 3 && strcmp(argv[1], "leaderexit") == 0) {
		file = argv[2];
		return leaderexit();
	}
	if (argc == 3 && strcmp(argv[1], "killwrite") == 0) {
		file = argv[2];
		return killwrite();
	}
	if (argc == 3 && strcmp(argv[1], "appenders") == 0) {
		file = argv[2];
		return appenders();
	}
	fprintf(stderr, "usage: threadio readers FILE N | exec FILE | "
			"execrace FILE | leaderexit FILE | killwrite FILE | "
			"appenders FILE\n");
	return 2;
}
