// SPDX-License-Identifier: MIT
#include "vmchild.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>

/* Born with every signal blocked: none may run one of iowrap's handlers
 * on our memory before the child has set up its own. */
pid_t vmchild_start(int (*fn)(void *), void *arg, struct vmchild_stack *stack)
{
	sigset_t all, old;
	pid_t pid;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(fn, stack->bytes + sizeof(stack->bytes), CLONE_VM | SIGCHLD,
		    arg, NULL, NULL, NULL);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pid < 0 ? -err : pid;
}
