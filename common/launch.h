/* SPDX-License-Identifier: MIT */
/*
 * Starts the task: a child that waits on a pipe until the tracer has
 * attached (or decided not to), then execs the command.  An exec error is
 * passed back on a close-on-exec pipe, as posix_spawn does.
 */
#ifndef IOWRAP_LAUNCH_H
#define IOWRAP_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int go_fd; /* parent's end: one byte releases the child */
	int err_fd; /* parent's end: the child's exec errno, if it failed */
};

/* Forks the waiting child; 0 or -errno. */
int launch_prepare(struct launch *l, const char *path, char *const argv[]);
/* run: exec the command; !run: exit 125 without running it. */
void launch_release(struct launch *l, bool run);
/* After the child is gone: errno of a failed exec, or 0. */
int launch_exec_error(struct launch *l);

#endif
