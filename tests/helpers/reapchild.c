// SPDX-License-Identifier: MIT
/*
 * reapchild MODE FILE: forks a child that reads FILE whole and exits, and
 * waits for it to be gone; then reports on stdout, in one write, its own
 * I/O as the kernel counts it per thread (/proc/thread-self/io, which
 * leaves out reaped children), as the line
 *   rchar syscr
 * with the helper thread's own figures added in mode "thread".
 *
 * The kernel adds a child's I/O to its parent's /proc/PID/io only when the
 * parent reaps it with wait(); an auto-reaped one (SIGCHLD ignored, or
 * SA_NOCLDWAIT) is never added.  MODE:
 *   wait       waitpid() reaps it
 *   ignore     SIGCHLD is SIG_IGN: the kernel reaps it
 *   nocldwait  SA_NOCLDWAIT: the kernel reaps it
 *   thread     as ignore, and first a thread reads FILE and ends
 *
 * Each read of an io file counts in the figures that the next one shows:
 * the sums below add the bytes and the call of every such read.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct own_io {
	unsigned long long rchar, syscr;
};

static unsigned long long field(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static void read_whole(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);

	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
}

/* The calling thread's figures, this read of them included. */
static int thread_io(struct own_io *out)
{
	char text[1024];
	int fd = open("/proc/thread-self/io", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	out->rchar = field(text, "rchar: ") + (unsigned long long)n;
	out->syscr = field(text, "syscr: ") + 1;
	return 0;
}

static void *reader_thread(void *arg)
{
	struct own_io *io = arg;

	read_whole(getenv("REAPCHILD_FILE"));
	return thread_io(io) == 0 ? io : NULL;
}

/* Until the kernel has reaped the child: kill() then fails. */
static void wait_gone(pid_t pid)
{
	const struct timespec ms = { 0, 1000000 };

	while (kill(pid, 0) == 0 || errno != ESRCH)
		nanosleep(&ms, NULL);
}

static int no_child_wait(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = SA_NOCLDWAIT;
	return sigaction(SIGCHLD, &sa, NULL);
}

int main(int argc, char **argv)
{
	struct own_io main_io, thread_io_sum = { 0, 0 };
	const char *mode;
	char line[64];
	pthread_t th;
	void *ret;
	pid_t pid;
	int n;

	if (argc != 3 || setenv("REAPCHILD_FILE", argv[2], 1) < 0)
		return 2;
	mode = argv[1];
	if (strcmp(mode, "thread") == 0) {
		if (pthread_create(&th, NULL, reader_thread, &thread_io_sum) ||
		    pthread_join(th, &ret) || !ret)
			return 3;
	}
	if (strcmp(mode, "ignore") == 0 || strcmp(mode, "thread") == 0)
		signal(SIGCHLD, SIG_IGN);
	else if (strcmp(mode, "nocldwait") == 0 && no_child_wait() < 0)
		return 4;
	else if (strcmp(mode, "wait") != 0 && strcmp(mode, "nocldwait") != 0)
		return 2;
	pid = fork();
	if (pid < 0)
		return 5;
	if (pid == 0) {
		read_whole(argv[2]);
		_exit(0);
	}
	if (strcmp(mode, "wait") == 0) {
		if (waitpid(pid, NULL, 0) != pid)
			return 6;
	} else {
		wait_gone(pid);
	}
	if (thread_io(&main_io) < 0)
		return 7;
	n = snprintf(line, sizeof(line), "%llu %llu\n",
		     main_io.rchar + thread_io_sum.rchar,
		     main_io.syscr + thread_io_sum.syscr);
	return write(1, line, (size_t)n) == n ? 0 : 8;
}
