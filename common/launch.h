/* SPDX-License-Identifier: MIT */
/*
 * Starts the task: a child that waits on a pipe until the tracer has
 * attached (or decided not to), then execs the command.  Its hook's note
 * and an exec error are left in a page shared with the parent, which
 * looks once a close-on-exec pipe says the exec is done (posix_spawn's
 * way, without writing to the pipe: the task's wchar would count it).
 */
#ifndef IOWRAP_LAUNCH_H
#define IOWRAP_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

/* Run in the child right before exec, e.g. to install a seccomp filter.
 * Returns 0 or a note (not 0) for the parent; never stops the exec. */
typedef int (*launch_hook)(void *arg);

/* How the waiting child is released. */
enum launch_go {
	LAUNCH_CANCEL, /* exit 125 without running the command */
	LAUNCH_RUN, /* the hook, then the command */
	/* The command without the hook: a seccomp filter that traps to a
	 * tracer that never attached would fail those syscalls (ENOSYS). */
	LAUNCH_RUN_BARE,
};

/* What the child leaves for the parent. */
struct launch_notes {
	int hook; /* what before_exec returned */
	int exec_error; /* the errno of a failed exec */
};

struct launch {
	pid_t pid;
	int go_fd; /* parent's end: closing it releases the child */
	int done_fd; /* parent's end: EOF once the child has execed or died */
	struct launch_notes *notes; /* MAP_SHARED with the child */
	launch_hook before_exec;
	void *hook_arg;
};

/* execv(3) as execvp(3) does it: a file without a #! line runs with the
 * shell.  Returns only if that failed, with errno the execv's. */
void launch_exec(const char *path, char *const argv[]);
/* After its exec failed with ENOENT: if path is a script, says that the
 * interpreter its #! line names is missing, and returns true. */
bool launch_say_bad_interpreter(const char *path);
/* What a launched child's failed exec left unsaid: ENOENT, which may be
 * a missing #! interpreter (the child says the others itself). */
void launch_say_exec_error(const char *path, int err);
/* Forks the waiting child (before_exec set, or NULL); 0 or -errno. */
int launch_prepare(struct launch *l, const char *path, char *const argv[]);
/* LAUNCH_CANCEL also drops the notes: launch_exec_error is not called. */
void launch_release(struct launch *l, enum launch_go go);
/* After the child is gone: errno of a failed exec, or 0; *hook_note is
 * what the hook returned. */
int launch_exec_error(struct launch *l, int *hook_note);

#endif
