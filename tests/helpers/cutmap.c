// SPDX-License-Identifier: MIT
/*
 * cutmap FILE SIZE COMMAND [ARG...]: runs COMMAND and, the moment it has
 * mapped FILE (an mmap of a descriptor open on FILE returned), truncates
 * FILE to SIZE bytes and lets it go on: what a trace file cut shorter
 * while `iowrap report` reads it does, at a known point instead of by a
 * race.  SIZE "sigbus" sends COMMAND a SIGBUS with kill() there instead.
 * COMMAND is followed with ptrace until then (one process, not its
 * children; the signals it gets meanwhile are passed on).  Exits with
 * COMMAND's status, or 128 + the signal that killed it; 125 if FILE was
 * never mapped (said on stderr), 126 on an error of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(126);
}

static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* Whether descriptor fd of pid is open on file. */
static int fd_is_file(pid_t pid, unsigned long long fd, const struct stat *file)
{
	char link[64];
	struct stat st;

	snprintf(link, sizeof(link), "/proc/%d/fd/%llu", (int)pid, fd);
	return stat(link, &st) == 0 && st.st_dev == file->st_dev &&
	       st.st_ino == file->st_ino;
}

/*
 * Follows pid from syscall to syscall until an mmap of file returns:
 * true then (pid is at that syscall's exit), false if pid ended first
 * (*status is then its wait status).
 */
static int wait_for_mapping(pid_t pid, const struct stat *file, int *status)
{
	struct __ptrace_syscall_info info;
	unsigned long long nr = 0, fd = 0;
	long sig = 0;

	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, 0, sig) < 0)
			die("cutmap: PTRACE_SYSCALL");
		sig = 0;
		if (waitpid(pid, status, 0) < 0)
			die("cutmap: waitpid");
		if (WIFEXITED(*status) || WIFSIGNALED(*status))
			return 0;
		if (WSTOPSIG(*status) != (SIGTRAP | 0x80)) {
			/* A signal for COMMAND is passed on; exec's event
			 * stop (status >> 16 set) is not a signal. */
			if (*status >> 16 == 0)
				sig = WSTOPSIG(*status);
			continue;
		}
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info),
			   &info) < 0)
			die("cutmap: PTRACE_GET_SYSCALL_INFO");
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
			nr = info.entry.nr;
			fd = info.entry.args[4];
		} else if (info.op == PTRACE_SYSCALL_INFO_EXIT &&
			   nr == SYS_mmap && !info.exit.is_error &&
			   fd_is_file(pid, fd, file)) {
			return 1;
		}
	}
}

int main(int argc, char **argv)
{
	struct stat file;
	long long size;
	int status;
	pid_t pid;

	if (argc < 4) {
		fprintf(stderr, "usage: cutmap FILE SIZE COMMAND [ARG...]\n");
		return 126;
	}
	if (stat(argv[1], &file) < 0)
		die(argv[1]);
	size = atoll(argv[2]);
	pid = fork();
	if (pid < 0)
		die("cutmap: fork");
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0 || raise(SIGSTOP))
			die("cutmap: PTRACE_TRACEME");
		execvp(argv[3], argv + 3);
		die(argv[3]);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
		die("cutmap: waitpid");
	if (ptrace(PTRACE_SETOPTIONS, pid, 0,
		   PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC |
			   PTRACE_O_EXITKILL) < 0)
		die("cutmap: PTRACE_SETOPTIONS");
	if (!wait_for_mapping(pid, &file, &status)) {
		fprintf(stderr, "cutmap: %s was never mapped (status %d)\n",
			argv[1], exit_status(status));
		return 125;
	}
	if (strcmp(argv[2], "sigbus") == 0) {
		if (kill(pid, SIGBUS) < 0)
			die("cutmap: kill");
	} else if (truncate(argv[1], size) < 0) {
		die("cutmap: truncate");
	}
	if (ptrace(PTRACE_DETACH, pid, 0, 0) < 0)
		die("cutmap: PTRACE_DETACH");
	if (waitpid(pid, &status, 0) < 0)
		die("cutmap: waitpid");
	return exit_status(status);
}
