// SPDX-License-Identifier: MIT
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "signals.h"
#include "util.h"

/* The interpreter of a "#!" line, as the kernel reads it: the first word
 * of the line's first 255 bytes after "#!" and blanks. */
static bool script_interpreter(const char *path, char *interp, size_t size)
{
	char head[256];
	ssize_t n;
	size_t start = 2, len;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return false;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n < 3 || head[0] != '#' || head[1] != '!')
		return false;
	head[n] = '\0';
	start += strspn(head + start, " \t");
	len = strcspn(head + start, " \t\n");
	if (!len)
		return false;
	snprintf(interp, size, "%.*s", (int)len, head + start);
	/* The line goes to a terminal: no escape sequences. */
	for (char *p = interp; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return true;
}

bool launch_say_bad_interpreter(const char *path)
{
	char interp[256];

	if (!script_interpreter(path, interp, sizeof(interp)))
		return false;
	warnx_line(
		"cannot execute %s: bad interpreter %s (its #! line): No such file or directory; fix the script's first line or install %s",
		path, interp, interp);
	return true;
}

void launch_say_exec_error(const char *path, int err)
{
	if (err == ENOENT && launch_say_bad_interpreter(path))
		return;
	if (err == ENOENT)
		warnx_line("cannot execute %s: %s", path, strerror(err));
}

static void report_exec_error(struct launch_notes *notes, const char *path,
			      int err)
{
	notes->exec_error = err;
	/* ENOENT for a file that is there: what its #! line names may not
	 * be.  iowrap reads that line, not this traced process, whose open
	 * would be a row of the task's trace (launch_say_exec_error). */
	if (err != ENOENT)
		warnx_line("cannot execute %s: %s", path, strerror(err));
	_exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE);
}

/* execvp(3) runs a file without a #! line with the shell: so do we. */
static void exec_as_script(const char *path, char *const argv[])
{
	size_t n = 0;
	char **sh_argv;

	while (argv[n])
		n++;
	sh_argv = calloc(n + 2, sizeof(char *));
	if (!sh_argv)
		return;
	sh_argv[0] = "sh";
	sh_argv[1] = (char *)path;
	for (size_t i = 1; i < n; i++)
		sh_argv[i + 1] = argv[i];
	execv("/bin/sh", sh_argv);
}

void launch_exec(const char *path, char *const argv[])
{
	int err;

	execv(path, argv);
	err = errno;
	if (err == ENOEXEC)
		exec_as_script(path, argv);
	errno = err;
}

/*
 * Waits for the parent's word: EOF alone means run, with the hook; a byte
 * means run without it ('B') or not at all.  poll() first, not read(): in
 * a traced run a read would count in the task's rchar.
 */
static enum launch_go wait_for_go(int go_fd)
{
	struct pollfd pfd = { .fd = go_fd, .events = POLLIN };
	char word = 0;
	int n;

	while ((n = poll(&pfd, 1, -1)) < 0 && errno == EINTR)
		;
	if (n < 0) {
		warnx_line("cannot wait for the tracer: %s", strerror(errno));
		return LAUNCH_CANCEL;
	}
	if (!(pfd.revents & POLLIN))
		return pfd.revents & POLLHUP ? LAUNCH_RUN : LAUNCH_CANCEL;
	while (read(go_fd, &word, 1) < 0 && errno == EINTR)
		;
	return word == 'B' ? LAUNCH_RUN_BARE : LAUNCH_CANCEL;
}

/*
 * Until the parent has seized it (PTRACE_O_EXITKILL from then on) or told
 * it to run bare, the child must die with iowrap: a dead parent's pipe
 * reads as EOF, "run", and the filter would go in with no tracer.
 */
static void die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(EXIT_IOWRAP_FAILED);
}

static void child(struct launch *l, const char *path, char *const argv[],
		  int go_fd)
{
	enum launch_go go = wait_for_go(go_fd);

	close(go_fd);
	if (go == LAUNCH_CANCEL)
		_exit(EXIT_IOWRAP_FAILED);
	/* Untraced, the task may outlive iowrap as it would without it.
	 * Should this fail, it only dies with iowrap. */
	if (go == LAUNCH_RUN_BARE && prctl(PR_SET_PDEATHSIG, 0) < 0)
		warnx_line("the task dies with iowrap: %s", strerror(errno));
	signals_restore_for_child();
	umask_for_the_task();
	if (go == LAUNCH_RUN && l->before_exec)
		l->notes->hook = l->before_exec(l->hook_arg);
	launch_exec(path, argv);
	report_exec_error(l->notes, path, errno);
}

int launch_prepare(struct launch *l, const char *path, char *const argv[])
{
	pid_t parent = getpid();
	int go[2], done[2], err;

	l->notes = mmap(NULL, sizeof(*l->notes), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (l->notes == MAP_FAILED) {
		l->notes = NULL;
		return -errno;
	}
	if (pipe2(go, O_CLOEXEC) < 0) {
		err = -errno;
		goto err_unmap;
	}
	if (pipe2(done, O_CLOEXEC) < 0) {
		err = -errno;
		goto err_close_go;
	}
	l->pid = fork();
	if (l->pid < 0) {
		err = -errno;
		goto err_close_done;
	}
	if (l->pid == 0) {
		die_with_parent(parent);
		close(go[1]);
		close(done[0]);
		child(l, path, argv, go[0]);
	}
	close(go[0]);
	close(done[1]);
	l->go_fd = go[1];
	l->done_fd = done[0];
	return 0;

err_close_done:
	close(done[0]);
	close(done[1]);
err_close_go:
	close(go[0]);
	close(go[1]);
err_unmap:
	munmap(l->notes, sizeof(*l->notes));
	l->notes = NULL;
	return err;
}

/* What the child left, and the pipe that says when: no longer needed. */
static void launch_end(struct launch *l)
{
	close(l->done_fd);
	l->done_fd = -1;
	munmap(l->notes, sizeof(*l->notes));
	l->notes = NULL;
}

void launch_release(struct launch *l, enum launch_go go)
{
	const char *word = go == LAUNCH_RUN_BARE ? "B" : "X";

	/* Unsaid, the child would take EOF for "run" with the filter. */
	if (go != LAUNCH_RUN && write_all(l->go_fd, word, 1) < 0)
		kill(l->pid, SIGKILL);
	close(l->go_fd);
	l->go_fd = -1;
	if (go == LAUNCH_CANCEL)
		launch_end(l);
}

int launch_exec_error(struct launch *l, int *hook_note)
{
	char byte;
	int err;

	/* Nothing is written: EOF comes at the exec or the child's end. */
	while (read(l->done_fd, &byte, 1) < 0 && errno == EINTR)
		;
	*hook_note = l->notes->hook;
	err = l->notes->exec_error;
	launch_end(l);
	return err;
}
