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
 *   fdunshare clonefirst  The first thread opens a.txt (fd 3); a thread
 *                      made (by a second thread) without CLONE_FILES
 *                      closes fd 3 in its table,
 *                      opens t.txt there and writes "thread" to it, at
 *                      once (before its creator's clone event, if the
 *                      tracer lets it run); then the first thread writes
 *                      "main!" to its fd 3, a.txt.
 *   fdunshare closerange  The first thread opens a.txt (fd 3); a thread
 *                      closes fd 3 and up with close_range(CLOSE_RANGE_
 *                      UNSHARE), in a copy of the table it then keeps,
 *                      opens t.txt there and writes "thread" to it; then
 *                      the first thread writes "main!" to its fd 3, a.txt.
 *
 * And a thread's table of its own, used (split: after unshare(CLONE_FILES);
 * splitclone: a thread made without CLONE_FILES):
 *
 *   fdunshare split [exec]       The thread opens t.txt (fd 3) and writes
 *   fdunshare splitclone [exec]  "thread"; then the first thread opens
 *                                m.txt, fd 3 in its table, writes "main!"
 *                                and closes it; then the thread forks a
 *                                child that writes "+kid" to its fd 3,
 *                                and closes t.txt, or with exec execs
 *                                sh, which writes "+sh" to fd 3.
 *
 * And cwds that part (run in a directory with a subdirectory sub):
 *
 *   fdunshare fsthread   A thread unshare(CLONE_FS)s, chdirs to sub and
 *                        makes t.txt there; then the first thread makes
 *                        m.txt, in the cwd it kept.
 *   fdunshare fsclone    The same from a thread made by clone(CLONE_THREAD)
 *                        without CLONE_FS.
 *   fdunshare fsprocess  A process makes p0.txt, then a child made with
 *                        clone(CLONE_FS) chdirs to sub, which moves its
 *                        parent too: the parent's p1.txt is made in sub.
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
static void thread_io(bool into_sub)
{
	if (into_sub && syscall(SYS_chdir, "sub") != 0)
		syscall(SYS_exit_group, 4);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "t.txt",
			      O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		syscall(SYS_exit_group, 2);
	if (syscall(SYS_write, fd, "thread", 6) != 6)
		syscall(SYS_exit_group, 3);
	syscall(SYS_close, fd);
}

/* The first thread, after the other: a file in the cwd it kept. */
static int main_thread_io(bool cwd_apart)
{
	if (cwd_apart)
		close(create("m.txt"));
	return 0;
}

static void *thread_main(void *flags)
{
	int unshare_flags = *(int *)flags;

	if (unshare_flags && unshare(unshare_flags) < 0)
		die("unshare");
	thread_io(unshare_flags & CLONE_FS);
	return NULL;
}

static int run_pthread(int unshare_flags)
{
	pthread_t th;

	if (pthread_create(&th, NULL, thread_main, &unshare_flags) != 0 ||
	    pthread_join(th, NULL) != 0)
		die("pthread");
	return main_thread_io(unshare_flags & CLONE_FS);
}

static int clone_thread_main(void *into_sub)
{
	thread_io(into_sub != NULL);
	atomic_store(&thread_done, 1);
	syscall(SYS_exit, 0);
	return 0;
}

/* Makes a thread that runs fn(arg), with neither of the flags in
 * leave_out, and waits until it has done (thread_done). */
static void clone_and_wait(int (*fn)(void *), int leave_out, void *arg)
{
	char *stack = malloc(STACK_SIZE);
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
		    CLONE_THREAD | CLONE_SYSVSEM;

	if (!stack)
		die("malloc");
	if (clone(fn, stack + STACK_SIZE, flags & ~leave_out, arg) < 0)
		die("clone");
	while (!atomic_load(&thread_done))
		sched_yield();
}

/* A thread made without CLONE_FILES, or without CLONE_FS. */
static int run_clone(int leave_out)
{
	clone_and_wait(clone_thread_main, leave_out,
		       leave_out == CLONE_FS ? "sub" : NULL);
	return main_thread_io(leave_out == CLONE_FS);
}

static int clone_first_main(void *arg)
{
	syscall(SYS_close, 3);
	return clone_thread_main(arg);
}

/* Made by a thread other than the first: its stop then tends to come
 * before its creator's event. */
static void *clone_first_creator(void *arg)
{
	(void)arg;
	clone_and_wait(clone_first_main, CLONE_FILES, NULL);
	return NULL;
}

/* a.txt on fd 3, a thread that runs fn and ends, then "main!" to fd 3. */
static int run_beside_a_txt(void *(*fn)(void *))
{
	int fd = create("a.txt");
	pthread_t th;

	if (fd != 3)
		die("a.txt is not fd 3");
	if (pthread_create(&th, NULL, fn, NULL) != 0 ||
	    pthread_join(th, NULL) != 0)
		die("pthread");
	put(fd, "main!");
	close(fd);
	return 0;
}

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

static void *close_range_thread(void *arg)
{
	(void)arg;
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_UNSHARE) != 0)
		die("close_range");
	thread_io(false);
	return NULL;
}

static atomic_int split_stage;
static char *const split_sh[] = { "sh", "-c", "printf +sh >&3", NULL };

static void split_await(int stage)
{
	while (atomic_load(&split_stage) != stage)
		syscall(SYS_sched_yield);
}

/* The thread of split, on a table of its own: raw syscalls only. */
static void split_thread_io(bool exec_sh)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "t.txt",
			      O_WRONLY | O_CREAT | O_TRUNC, 0600);
	long pid;
	int status;

	if (fd != 3 || syscall(SYS_write, fd, "thread", 6) != 6)
		syscall(SYS_exit_group, 2);
	atomic_store(&split_stage, 1);
	split_await(2);
	pid = syscall(SYS_fork);
	if (pid == 0) {
		if (syscall(SYS_write, fd, "+kid", 4) != 4)
			syscall(SYS_exit_group, 3);
		syscall(SYS_exit_group, 0);
	}
	if (pid < 0 || syscall(SYS_wait4, pid, &status, 0, NULL) != pid ||
	    status != 0)
		syscall(SYS_exit_group, 4);
	if (exec_sh) {
		syscall(SYS_execve, "/bin/sh", split_sh, environ);
		syscall(SYS_exit_group, 5);
	}
	syscall(SYS_close, fd);
	atomic_store(&split_stage, 3);
}

static void *split_pthread_main(void *exec_sh)
{
	if (unshare(CLONE_FILES) < 0)
		die("unshare");
	split_thread_io(exec_sh != NULL);
	return NULL;
}

static int split_clone_main(void *exec_sh)
{
	split_thread_io(exec_sh != NULL);
	syscall(SYS_exit, 0);
	return 0;
}

/* The first thread of split: its fd 3 is m.txt.  An exec by the other
 * thread ends it while it waits. */
static int run_split(bool by_clone, bool exec_sh)
{
	int flags = CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM;
	char *stack = malloc(STACK_SIZE);
	void *arg = exec_sh ? "exec" : NULL;
	pthread_t th;
	bool made;
	int fd;

	if (!stack)
		die("malloc");
	if (by_clone)
		made = clone(split_clone_main, stack + STACK_SIZE, flags,
			     arg) >= 0;
	else
		made = pthread_create(&th, NULL, split_pthread_main, arg) == 0;
	if (!made)
		die("thread");
	split_await(1);
	fd = create("m.txt");
	if (fd != 3)
		die("m.txt is not fd 3");
	put(fd, "main!");
	close(fd);
	atomic_store(&split_stage, 2);
	split_await(3);
	if (!by_clone && pthread_join(th, NULL) != 0)
		die("pthread_join");
	return 0;
}

static int fs_child_main(void *arg)
{
	(void)arg;
	if (chdir("sub") != 0)
		die("chdir");
	return 0;
}

static int run_fs_process(void)
{
	char *stack = malloc(STACK_SIZE);
	int status;
	pid_t pid;

	if (!stack)
		die("malloc");
	close(create("p0.txt"));
	pid = clone(fs_child_main, stack + STACK_SIZE, CLONE_FS | SIGCHLD,
		    NULL);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		die("clone");
	close(create("p1.txt"));
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc >= 2 ? argv[1] : "";
	bool exec_sh = argc == 3 && strcmp(argv[2], "exec") == 0;

	if (argc > 3 || (argc == 3 && !exec_sh))
		mode = "";
	else if (argc == 3 && strncmp(mode, "split", 5) != 0)
		mode = "";

	if (strcmp(mode, "process") == 0)
		return run_process();
	if (strcmp(mode, "thread") == 0)
		return run_pthread(CLONE_FILES);
	if (strcmp(mode, "shared") == 0)
		return run_pthread(0);
	if (strcmp(mode, "fsthread") == 0)
		return run_pthread(CLONE_FS);
	if (strcmp(mode, "clone") == 0)
		return run_clone(CLONE_FILES);
	if (strcmp(mode, "clonefirst") == 0)
		return run_beside_a_txt(clone_first_creator);
	if (strcmp(mode, "closerange") == 0)
		return run_beside_a_txt(close_range_thread);
	if (strcmp(mode, "fsclone") == 0)
		return run_clone(CLONE_FS);
	if (strcmp(mode, "fsprocess") == 0)
		return run_fs_process();
	if (strcmp(mode, "split") == 0 || strcmp(mode, "splitclone") == 0)
		return run_split(mode[5] != '\0', exec_sh);
	fprintf(stderr, "usage: fdunshare process|thread|clone|clonefirst|"
			"closerange|shared|"
			"fsthread|fsclone|fsprocess|split [exec]|"
			"splitclone [exec]\n");
	return 64;
}
