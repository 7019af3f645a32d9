// SPDX-License-Identifier: MIT
/*
 * sharedpos threads FILE N K: N threads read one shared descriptor at
 *   once, K reads each (sizes 8, 16, ... by thread).  Every 8 bytes of
 *   FILE hold their own offset, so each read knows where it was made.
 * sharedpos appends FILE N K [KILL]: N processes append K records each to
 *   FILE at once, each through its own O_APPEND descriptor; FILE is then
 *   read back to find where each record went.  With KILL, the first KILL
 *   of them are SIGKILLed once a quarter of the records are in.
 * Prints the truth, one line per operation on FILE: TID OFFSET SIZE, in
 * each thread's order; a tracer's io.csv must say the same.
 * sharedpos clonefiles A B: a child made with clone(CLONE_FILES), which
 *   shares the fd table, closes A's fd 3 and opens B (fd 3 again), reads 5
 *   bytes; then the parent reads fd 3: B, at 5.  Prints what it read.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_THREADS 16
#define MAX_READS 512
#define RECORD 32

struct reader {
	pthread_t thread;
	pid_t tid;
	int fd, reads;
	size_t size;
	uint64_t offset[MAX_READS];
};

static pthread_barrier_t start;

static void *read_shared(void *arg)
{
	struct reader *r = arg;
	uint64_t buf[MAX_THREADS];

	r->tid = gettid();
	pthread_barrier_wait(&start);
	for (int i = 0; i < r->reads; i++) {
		if (read(r->fd, buf, r->size) != (ssize_t)r->size)
			exit(3);
		r->offset[i] = buf[0];
	}
	return NULL;
}

static int write_offsets(const char *path, size_t words)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	for (uint64_t w = 0; w < words; w++) {
		uint64_t off = w * 8;

		if (write(fd, &off, sizeof(off)) != sizeof(off))
			return -1;
	}
	return close(fd);
}

static int threads(const char *path, int n, int k)
{
	static struct reader r[MAX_THREADS];
	size_t total = 0;
	int fd;

	for (int i = 0; i < n; i++)
		total += (size_t)(i + 1) * 8 * (size_t)k;
	if (write_offsets(path, total / 8) < 0)
		return 1;
	fd = open(path, O_RDONLY);
	if (fd < 0 || pthread_barrier_init(&start, NULL, (unsigned)n))
		return 1;
	for (int i = 0; i < n; i++) {
		r[i] = (struct reader){ .fd = fd, .reads = k };
		r[i].size = (size_t)(i + 1) * 8;
		if (pthread_create(&r[i].thread, NULL, read_shared, &r[i]))
			return 1;
	}
	for (int i = 0; i < n; i++)
		pthread_join(r[i].thread, NULL);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < k; j++)
			printf("%d %llu %zu\n", r[i].tid,
			       (unsigned long long)r[i].offset[j], r[i].size);
	return close(fd);
}

static void append_records(const char *path, int k, int go)
{
	char rec[RECORD + 1], c;
	int fd = open(path, O_WRONLY | O_APPEND);

	if (fd < 0 || read(go, &c, 1) != 0)
		_exit(3);
	for (int i = 0; i < k; i++) {
		snprintf(rec, sizeof(rec), "%-15d %-15d\n", (int)getpid(), i);
		if (write(fd, rec, RECORD) != RECORD)
			_exit(3);
	}
	_exit(0);
}

/* Waits for a quarter of the records, then kills the first kill. */
static void kill_some(const char *path, const pid_t *child, int n, int k,
		      int kill_n)
{
	struct stat st;

	do
		if (stat(path, &st) < 0)
			return;
	while (st.st_size < (off_t)n * k * RECORD / 4);
	for (int i = 0; i < kill_n; i++)
		kill(child[i], SIGKILL);
}

static int appends(const char *path, int n, int k, int kill_n)
{
	char rec[RECORD + 1];
	int go[2], fd, status, failed = 0;
	pid_t child[MAX_THREADS], pid;
	FILE *f;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || close(fd) || pipe(go))
		return 1;
	for (int i = 0; i < n; i++) {
		child[i] = fork();
		if (child[i] == 0) {
			close(go[1]);
			append_records(path, k, go[0]);
		}
	}
	close(go[1]); /* EOF: all start at once */
	kill_some(path, child, n, k, kill_n);
	while ((pid = wait(&status)) > 0)
		for (int i = kill_n; i < n; i++)
			if (pid == child[i])
				failed |= !WIFEXITED(status) ||
					  WEXITSTATUS(status);
	f = fopen(path, "r");
	if (failed || !f)
		return 1;
	for (long off = 0; fread(rec, RECORD, 1, f) == 1; off += RECORD)
		printf("%d %ld %d\n", atoi(rec), off, RECORD);
	return fclose(f) != 0;
}

static int clone_files(const char *a, const char *b)
{
	char buf[16] = "";
	ssize_t n;
	pid_t pid;

	if (open(a, O_RDONLY) != 3)
		return 1;
	/* No CLONE_VM: the child runs on a copy of this stack, as fork's. */
	pid = (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0L, 0L, 0L, 0L);
	if (pid == 0) {
		close(3);
		_exit(open(b, O_RDONLY) != 3 || read(3, buf, 5) != 5);
	}
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return 1;
	n = read(3, buf, 7);
	printf("%.*s\n", (int)(n > 0 ? n : 0), buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "clonefiles") == 0)
		return clone_files(argv[2], argv[3]);
	int n = argc >= 5 ? atoi(argv[3]) : 0;
	int k = argc >= 5 ? atoi(argv[4]) : 0;
	int kill_n = argc == 6 ? atoi(argv[5]) : 0;

	if (n < 1 || n > MAX_THREADS || k < 1 || k > MAX_READS || kill_n < 0 ||
	    kill_n > n || argc > 6)
		return 2;
	if (strcmp(argv[1], "threads") == 0 && argc == 5)
		return threads(argv[2], n, k);
	if (strcmp(argv[1], "appends") == 0)
		return appends(argv[2], n, k, kill_n);
	return 2;
}
