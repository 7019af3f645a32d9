// SPDX-License-Identifier: MIT
/*
 * Descriptor tables that part from the one they were made on.
 *
 *   fdunshare process  A process made with clone(CLONE_FILES) shares its
 *                      parent's table, then unshare(CLONE_FILES)s and opens
 *                      c.txt; the parent then opens p.txt, which gets the
 *                      same number in its table.  Each writes its own file
 *                      through that number: "child" (5 bytes) and
 *                      "parent!" (7).  Prints "fd N" for both.
 *   fdunshare thread   A thread unshare(CLONE_FILES)s, opens t.txt and
 *                      writes "thread" to it.
 *   fdunshare clone    The same from a thread made by clone(CLONE_THREAD)
 *                      without CLONE_FILES.
 *   fdunshare shared   The same from a thread that does not unshare.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define STACK_SIZE (256 * 1024)

static int to_parent[2], to_child[2];
static atomic_int thread_done;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int create(const char *name)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		die(name);
	return fd;
}

static void put(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		die("write");
}

static void await(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		die("read");
}

static int child_main(void *arg)
{
	int fd;

	(void)arg;
	if (unshare(CLONE_FILES) < 0)
		die("unshare");
	fd = create("c.txt");
	printf("fd %d\n", fd);
	fflush(stdout);
	put(to_parent[1], "x");
	await(to_child[0]);
	put(fd, "child");
	close(fd);
	return 0;
}

static int run_process(void)
{
	char *stack = malloc(STACK_SIZE);
	int status, fd;
	pid_t pid;

	if (!stack || pipe(to_parent) < 0 || pipe(to_child) < 0)
		die("pipe");
	pid = clone(child_main, stack + STACK_SIZE, CLONE_FILES | SIGCHLD,
		    NULL);
	if (pid < 0)
		die("clone");
	await(to_parent[0]);
	fd = create("p.txt");
	printf("fd %d\n", fd);
	fflush(stdout);
	put(to_child[1], "x");
	if (waitpid(pid, &status, 0) != pid || status != 0)
		die("waitpid");
	put(fd, "parent!");
	close(fd);
	return 0;
}

/* Raw syscalls only: a clone()d thread shares the caller's TLS. */
static void thread_io(void)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "t.txt",
			      O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		syscall(SYS_exit_group, 2);
	if (syscall(SYS_write, fd, "thread", 6) != 6)
		syscall(SYS_exit_group, 3);
	syscall(SYS_close, fd);
}

static void *thread_main(void *unshare_files)
{
	if (unshare_files && unshare(CLONE_FILES) < 0)
		die("unshare");
	thread_io();
	return NULL;
}

static int run_pthread(bool unshare_files)
{
	pthread_t th;

	if (pthread_create(&th, NULL, thread_main,
			   unshare_files ? "yes" : NULL) != 0 ||
	    pthread_join(th, NULL) != 0)
		die("pthread");
	return 0;
}

static int clone_thread_main(void *arg)
{
	(void)arg;
	thread_io();
	atomic_store(&thread_done, 1);
	syscall(SYS_exit, 0);
	return 0;
}

static int run_clone(void)
{
	char *stack = malloc(STACK_SIZE);
	int flags = CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM;

	if (!stack)
		die("malloc");
	if (clone(clone_thread_main, stack + STACK_SIZE, flags, NULL) < 0)
		die("clone");
	while (!atomic_load(&thread_done))
		sched_yield();
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc == 2 ? argv[1] : "";

	if (strcmp(mode, "process") == 0)
		return run_process();
	if (strcmp(mode, "thread") == 0 || strcmp(mode, "shared") == 0)
		return run_pthread(strcmp(mode, "thread") == 0);
	if (strcmp(mode, "clone") == 0)
		return run_clone();
	fprintf(stderr, "usage: fdunshare process|thread|clone|shared\n");
	return 64;
}
